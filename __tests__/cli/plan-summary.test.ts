// `airlock plan`'s summary: a pure function of the RunPlan, short, with what a person checks.
import { planSummary } from '../../src/cli/plan-summary.js'
import { planRun } from '../../src/plan.js'
import type { Inputs } from '../../src/inputs.js'
import { DEFAULT_PROTECTED_PATHS } from '../../src/path-rules.js'
import { NO_POLICY } from '../../src/policy/policy-file.js'

function inputs(overrides: Partial<Inputs> = {}): Inputs {
  return {
    path: '/repo',
    ref: 'main',
    outputDir: '/repo/airlock-out',
    dockerfile: '/repo/agent/Dockerfile',
    buildContext: '/repo/agent',
    buildArgs: {},
    allowUnpinnedBase: false,
    agentCommand: 'agent --fix',
    testCommand: 'npm test',
    compareBase: true,
    task: { text: 'Fix it', source: 'file', file: 'task.md' },
    network: 'none',
    runtime: 'runc',
    timeoutMinutes: 30,
    graceSeconds: 10,
    memoryBytes: 2 * 1024 ** 3,
    cpus: 2,
    pidsLimit: 512,
    workspace: { sizeBytes: 4 * 1024 ** 3, required: false },
    user: '1000:1000',
    env: [{ name: 'NPM_TOKEN', value: 'secret-value' }],
    testReports: ['junit.xml'],
    maxLogBytes: 5 * 1024 * 1024,
    allowedPaths: ['src/**'],
    protectedPaths: [...DEFAULT_PROTECTED_PATHS],
    maxChangedFiles: 2000,
    maxDiffBytes: 20 * 1024 * 1024,
    threatReview: 'acknowledge',
    dryRun: false,
    runId: 'r1',
    artifactName: 'airlock-r1',
    policy: NO_POLICY.record,
    ...overrides
  }
}

describe('planSummary', () => {
  it('says image, isolation, network, phases, limits, capture, task and policy file in ~20 lines', () => {
    const plan = planRun(inputs())
    const text = planSummary(plan, { cwd: '/repo' })
    expect(text).toBe(
      [
        'Plan of run r1 (nothing has run; airlock plan --json prints all of it)',
        '  repository  . at main',
        '  image       built from agent/Dockerfile (context agent); every FROM pinned (by digest or by a local image ID)',
        '  isolation   runtime runc',
        '  network     none: the agent reaches nothing',
        '  phases      baseline npm test',
        '              agent    agent --fix',
        '              tests    npm test',
        '              each at most 30 min, then SIGTERM and 10 s before SIGKILL',
        '  limits      memory 2 GiB · cpus 2 · processes 512 · writes 4 GiB · user 1000:1000',
        '              read-only root, all capabilities dropped, no new privileges',
        `  changes     allowed: src/** · protected (need approval): ${DEFAULT_PROTECTED_PATHS.length} default patterns (CI, build and policy files)`,
        '              report lists up to 2000 files, diff up to 20 MiB; more is a violation',
        '  captured    airlock-out/: report, diff, phase logs (up to 5 MiB each), test reports junit.xml',
        '  task        file task.md (6 bytes)',
        '  env         NPM_TOKEN',
        '  policy file none read: no --policy-base given (.github/airlock.yml is read only from a base commit)',
        ''
      ].join('\n')
    )
    expect(text.split('\n').length).toBeLessThan(
      JSON.stringify(plan, null, 2).split('\n').length / 4
    )
    expect(text).not.toContain('secret-value')
  })

  it('shows the allowlist, the model routes, isolation auto, the policy file and what is needed', () => {
    const plan = planRun(
      inputs({
        network: 'allowlist',
        image: `ghcr.io/acme/agent@sha256:${'b'.repeat(64)}`,
        dockerfile: undefined,
        buildContext: undefined,
        isolation: { requested: 'auto', fallback: 'runc', fork: null },
        egress: {
          allow: [
            { host: 'api.example.com', wildcard: false, ports: [443, 80] },
            { host: 'example.org', wildcard: true, ports: [8443] }
          ],
          hostMap: [],
          credentials: [],
          proxyImage: `node@sha256:${'c'.repeat(64)}`,
          budget: { maxRequests: 50 }
        } as unknown as Inputs['egress'],
        policy: {
          ...NO_POLICY.record,
          base: 'origin/main',
          commit: 'd'.repeat(40),
          blobSha: 'e'.repeat(40),
          via: 'git',
          settings: ['network', 'allowed-paths'],
          overridden: ['network']
        }
      })
    )
    const text = planSummary(plan, { cwd: '/elsewhere', needs: ['$KEY at run time'] })
    expect(text).toContain(`  image       pinned ghcr.io/acme/agent@sha256:${'b'.repeat(64)}\n`)
    expect(text).toContain(
      "  isolation   auto: the tier is chosen from the run's risk (fallback runc)\n"
    )
    expect(text).toContain(
      '  network     allowlist through the egress proxy: api.example.com, *.example.org:8443\n              budget: 50 requests\n'
    )
    expect(text).toContain('/repo/airlock-out/: report')
    expect(text).toContain(
      `  policy file .github/airlock.yml at origin/main (${'d'.repeat(12)}): sets network, allowed-paths; flags override network\n`
    )
    expect(text).toContain('  needs       $KEY at run time\n')
  })

  it('shows what the engine decided, or why nothing is decided yet', () => {
    const plan = planRun(inputs({ isolation: { requested: 'auto', fallback: null, fork: null } }))
    const decided = planSummary(plan, {
      cwd: '/repo',
      resolution: {
        runtime: 'runsc',
        note: null,
        isolation: {
          requested: 'auto',
          tier: 'runsc',
          runtime: 'runsc',
          reasons: ['the agent has network (allowlist)'],
          fellBackFrom: null
        },
        engine: {} as never
      }
    })
    expect(decided).toContain(
      '  isolation   runsc on runtime runsc: the agent has network (allowlist)\n'
    )
    const undecided = planSummary(plan, {
      cwd: '/repo',
      resolution: { undecided: 'the engine did not answer' }
    })
    expect(undecided).toContain(
      "  isolation   auto: the tier is chosen from the run's risk\n              the engine did not answer\n"
    )
  })
})

describe('how the FROM lines are pinned, as the Dockerfile says', () => {
  const D = 'd'.repeat(64)
  const line = (bases: Parameters<typeof planSummary>[1]['bases'], allow = false): string =>
    planSummary(planRun(inputs({ allowUnpinnedBase: allow })), { cwd: '/repo', bases })
      .split('\n')
      .find((l) => l.startsWith('  image')) ?? ''
  it.each([
    [undefined, false, 'every FROM pinned (by digest or by a local image ID)'],
    [[{ ref: `node@sha256:${D}`, pin: 'digest', line: 1 }], false, 'every FROM pinned by digest'],
    [
      [{ ref: `sha256:${D}`, pin: 'image-id', line: 1 }],
      false,
      "every FROM pinned by a local image ID (an image of this machine's engine, not pulled from a registry)"
    ],
    [
      [
        { ref: `node@sha256:${D}`, pin: 'digest', line: 1 },
        { ref: 'build', pin: 'stage', line: 3 },
        { ref: `sha256:${D}`, pin: 'image-id', line: 4 }
      ],
      false,
      "every FROM pinned: 1 by digest, 1 by a local image ID (an image of this machine's engine, not pulled from a registry)"
    ],
    [
      [{ ref: 'node:20', pin: 'unpinned', line: 1 }],
      true,
      'unpinned FROM accepted (allow-unpinned-base): node:20'
    ]
  ] as const)('%j', (bases, allow, expected) => {
    const got = line(bases as Parameters<typeof planSummary>[1]['bases'], allow)
    expect(got).toContain(expected)
    if (bases !== undefined && !bases.some((b) => b.pin === 'digest'))
      expect(got).not.toContain('by digest')
  })
})
