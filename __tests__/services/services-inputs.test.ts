import { ConfigurationError } from '../../src/errors.js'
import { parsePolicy } from '../../src/policy/policy-file.js'
import { parseServices } from '../../src/services/services-inputs.js'
import { containerSpec } from '../../src/sandbox/spec.js'
import { planRun } from '../../src/plan.js'
import type { Inputs } from '../../src/inputs.js'
import { LOCAL_EVENT } from '../../src/event.js'

const ID = `sha256:${'c'.repeat(64)}`

describe('parseServices', () => {
  test('a full entry', () => {
    expect(
      parseServices(
        [
          'db:',
          `  image: localhost:5000/pg@sha256:${'d'.repeat(64)}`,
          '  env: { POSTGRES_PASSWORD: test, PORT: 5432 }',
          '  command: postgres -D /tmp/pg',
          '  health: pg_isready',
          '  health-timeout-seconds: 30',
          '  user: "999:999"',
          'cache:',
          `  image: ${ID}`,
          '  user: 999',
          '  command: [redis-server, --save, ""]',
          '  health: redis-cli ping'
        ].join('\n')
      )
    ).toEqual([
      {
        name: 'db',
        image: `localhost:5000/pg@sha256:${'d'.repeat(64)}`,
        env: { POSTGRES_PASSWORD: 'test', PORT: '5432' },
        command: ['/bin/sh', '-c', 'postgres -D /tmp/pg'],
        health: 'pg_isready',
        healthTimeoutSeconds: 30,
        user: '999:999'
      },
      {
        name: 'cache',
        image: ID,
        env: {},
        command: ['redis-server', '--save', ''],
        health: 'redis-cli ping',
        healthTimeoutSeconds: 60,
        user: '999:999'
      }
    ])
  })

  test.each([
    ['[a, b]', /must be a mapping/],
    ['db: x', /must be a mapping with at least image and health/],
    [`db: {image: postgres:15, health: x}`, /image must be pinned/],
    [`db: {image: "${ID}"}`, /health is required/],
    [`DB: {image: "${ID}", health: x}`, /not a service name/],
    [`airlock-proxy: {image: "${ID}", health: x}`, /not a service name/],
    [`db: {image: "${ID}", health: x, ports: [5432]}`, /unknown key "ports"/],
    [`db: {image: "${ID}", health: x, command: c, user: "0"}`, /other than 0/],
    [`db: {image: "${ID}", health: x, command: c, user: root}`, /numeric uid/],
    [`db: {image: "${ID}", health: x, command: c}`, /user is required/],
    [`db: {image: "${ID}", health: x, user: "1"}`, /command is required/],
    [`db: {image: "${ID}", health: x, env: {"A-B": 1}}`, /not a variable name/],
    [
      `db: {image: "${ID}", health: x, command: c, user: "1", health-timeout-seconds: 0}`,
      /between 1 and 600/
    ],
    ['db: [', /not valid YAML/]
  ])('%s is refused', (raw, message) => {
    expect(() => parseServices(raw)).toThrow(ConfigurationError)
    expect(() => parseServices(raw)).toThrow(message)
  })

  test('the policy file may hold them as a mapping', () => {
    const p = parsePolicy(
      `services:\n  db:\n    image: "${ID}"\n    health: pg_isready\n    command: postgres\n    user: 101\n`
    )
    expect(parseServices(p.values.services)).toMatchObject([{ name: 'db', image: ID }])
    expect(() => parsePolicy('services: [db]\n')).toThrow(/services: .* is not a mapping/)
  })
})

describe('a test phase with services joins their network only', () => {
  const plan = planRun({
    path: '/r',
    ref: 'HEAD',
    outputDir: '/o',
    image: `x@sha256:${'a'.repeat(64)}`,
    buildArgs: {},
    allowUnpinnedBase: false,
    agentCommand: 'a',
    testCommand: 't',
    task: { text: 't', source: 'text' },
    network: 'none',
    runtime: 'runc',
    timeoutMinutes: 1,
    graceSeconds: 1,
    memoryBytes: 1 << 28,
    cpus: 1,
    pidsLimit: 64,
    workspace: { sizeBytes: 4 * 1024 ** 3, required: false },
    user: '1000:1000',
    env: [],
    testReports: [],
    compareBase: false,
    maxLogBytes: 1000,
    allowedPaths: [],
    protectedPaths: [],
    maxChangedFiles: 10,
    maxDiffBytes: 10,
    threatReview: 'acknowledge',
    dryRun: false,
    runId: 'r1',
    artifactName: 'a',
    policy: {
      path: 'p',
      base: null,
      commit: null,
      blobSha: null,
      via: null,
      settings: [],
      overridden: []
    }
  } as Inputs)
  const res = { imageId: ID, workspaceDir: '/w', taskFile: '/t', env: [] }
  const tests = plan.phases.find((p) => p.name === 'tests')
  const agent = plan.phases.find((p) => p.name === 'agent')
  if (!tests || !agent) throw new Error('phases missing')

  test('tests: the services network, IPv6 off', () => {
    const spec = containerSpec(plan, tests, { ...res, services: { network: 'svc-net' } })
    expect(spec.network).toEqual({ name: 'svc-net' })
    expect(spec.sysctls).toEqual({ 'net.ipv6.conf.all.disable_ipv6': '1' })
  })

  test('without services: no network at all', () => {
    const spec = containerSpec(plan, tests, res)
    expect(spec.network).toBeNull()
  })
})

describe('services and runtime', () => {
  test('runsc with services is left to the daemon check at run time (gVisor network entry)', async () => {
    const fs = await import('node:fs')
    const os = await import('node:os')
    const path = await import('node:path')
    const { getInputs } = await import('../../src/inputs.js')
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-svc-'))
    fs.writeFileSync(path.join(dir, 'Dockerfile'), 'FROM scratch\n')
    const values: Record<string, string> = {
      dockerfile: 'Dockerfile',
      'agent-command': 'a',
      'test-command': 't',
      runtime: 'runsc',
      services: `db: {image: "${ID}", health: x, command: c, user: "1"}`
    }
    const i = getInputs((n) => values[n], {
      workspace: dir,
      environment: {},
      hostUid: 1000,
      event: LOCAL_EVENT,
      hostCpus: 2,
      defaultRunId: 'r'
    })
    expect(i.runtime).toBe('runsc')
    expect(i.services?.map((s) => s.name)).toEqual(['db'])
    fs.rmSync(dir, { recursive: true, force: true })
  })
})
