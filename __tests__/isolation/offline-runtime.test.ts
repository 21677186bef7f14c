// gVisor registered twice (runsc with --network=none, runsc-net with a network): a run where one
// container needs a network (the install reaching its registry, the agent on the allowlist, the
// tests with services) serves those from runsc-net, and every container without a network stays
// on runsc, which has no network stack at all. The plan and the report say which and why.
import { fixturePlan } from '../../__fixtures__/plan.js'
import { parseHostRule } from '../../src/egress/host-rules.js'
import { resolvePlan } from '../../src/pipeline/resolve.js'
import type { PhasePlan, RunPlan } from '../../src/plan.js'
import { containerSpec } from '../../src/sandbox/spec.js'
import type { Runtime } from '../../src/sandbox/types.js'

const GVISOR_TWICE = {
  runc: { runtimeArgs: [] },
  runsc: { runtimeArgs: ['--network=none'] },
  'runsc-net': { runtimeArgs: ['--network=host'] }
}

function engine(runtimes: Record<string, { runtimeArgs: string[] }>): {
  runtime: Runtime
  preflighted: string[]
} {
  const preflighted: string[] = []
  const runtime = {
    preflight: (name: string) => {
      preflighted.push(name)
      return Promise.resolve()
    },
    engineFacts: () => Promise.resolve({ version: '20.10', apiVersion: '1.41', os: 'linux' }),
    ociRuntimes: () => Promise.resolve(runtimes)
  } as unknown as Runtime
  return { runtime, preflighted }
}

/** A run on runtime runsc whose install reaches the registry; the agent has no network. */
function installWithNetwork(): RunPlan {
  return fixturePlan({
    runtime: 'runsc',
    testCommand: 'npm test',
    setup: {
      command: 'npm ci',
      presets: [],
      allow: [parseHostRule('registry.npmjs.org')],
      proxy: { image: `sha256:${'a'.repeat(64)}`, hostMap: [] }
    }
  })
}

const res = { imageId: 'sha256:x', workspaceDir: '/w', taskFile: '/t', env: [] }
const phase = (plan: RunPlan, name: PhasePlan['name']): PhasePlan => {
  const p = plan.phases.find((x) => x.name === name)
  if (p === undefined) throw new Error(`no ${name} phase`)
  return p
}

describe('the containers without a network keep runsc', () => {
  test('the install on runsc-net, the agent and the tests on runsc; both entries checked', async () => {
    const { runtime, preflighted } = engine(GVISOR_TWICE)
    const plan = await resolvePlan(installWithNetwork(), runtime)
    expect(plan.sandbox.runtime).toBe('runsc-net')
    expect(plan.sandbox.offlineRuntime).toBe('runsc')
    expect(plan.resolution.note).toMatch(
      /containers without a network \(the agent, the tests\) run on "runsc", which has no network stack/
    )
    expect(preflighted.sort()).toEqual(['runsc', 'runsc-net'])
    const egress = { network: 'airlock-net', env: [] }
    expect(
      containerSpec(plan, phase(plan, 'setup'), { ...res, egress } as Parameters<
        typeof containerSpec
      >[2]).runtime
    ).toBe('runsc-net')
    expect(containerSpec(plan, phase(plan, 'agent'), res).runtime).toBe('runsc')
    expect(containerSpec(plan, phase(plan, 'tests'), res).runtime).toBe('runsc')
    // The tests with services join the services' network: runsc-net.
    expect(
      containerSpec(plan, phase(plan, 'tests'), {
        ...res,
        services: { network: 'svc' }
      } as Parameters<typeof containerSpec>[2]).runtime
    ).toBe('runsc-net')
  })

  test('isolation auto choosing runsc: the same split, and a reason saying so', async () => {
    const { runtime } = engine(GVISOR_TWICE)
    const base = installWithNetwork()
    const plan = await resolvePlan(
      { ...base, isolation: { requested: 'runsc', fallback: null, fork: false } } as RunPlan,
      runtime
    )
    expect(plan.resolution.isolation).toMatchObject({ tier: 'runsc', runtime: 'runsc-net' })
    expect(plan.sandbox.offlineRuntime).toBe('runsc')
    expect(plan.resolution.isolation?.reasons.join('; ')).toMatch(
      /containers without a network \(the agent, the tests\) run on "runsc"/
    )
    expect(containerSpec(plan, phase(plan, 'agent'), res).runtime).toBe('runsc')
  })

  test.each([
    ['a run without network', fixturePlan({ runtime: 'runsc' }), GVISOR_TWICE, 'runsc'],
    // runsc registered without --network=none serves every container itself.
    [
      'runsc with a network stack',
      installWithNetwork(),
      { runsc: { runtimeArgs: [] }, 'runsc-net': { runtimeArgs: ['--network=host'] } },
      'runsc'
    ],
    ['runc', fixturePlan({ runtime: 'runc' }), GVISOR_TWICE, 'runc']
  ])('%s: one runtime for every container', async (_name, given, runtimes, expected) => {
    const plan = await resolvePlan(given, engine(runtimes).runtime)
    expect(plan.sandbox.runtime).toBe(expected)
    expect(plan.sandbox.offlineRuntime).toBeUndefined()
    expect(containerSpec(plan, phase(plan, 'agent'), res).runtime).toBe(expected)
  })
})
