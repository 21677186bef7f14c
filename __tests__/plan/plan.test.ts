import { planRun } from '../../src/plan.js'
import type { Inputs } from '../../src/inputs.js'
import { NO_POLICY } from '../../src/policy/policy-file.js'
import { containerSpec, INSTALL_ENV, OFFLINE_ENV } from '../../src/sandbox/spec.js'
import { createOptions } from '../../src/sandbox/docker/create.js'

function inputs(overrides: Partial<Inputs> = {}): Inputs {
  return {
    path: '/repo',
    ref: 'HEAD',
    outputDir: '/repo/airlock-out',
    dockerfile: '/repo/agent/Dockerfile',
    buildContext: '/repo/agent',
    buildArgs: {},
    allowUnpinnedBase: false,
    agentCommand: 'agent --fix',
    task: { text: 'Fix it', source: 'text' },
    network: 'none',
    runtime: 'runc',
    timeoutMinutes: 2,
    graceSeconds: 5,
    memoryBytes: 512 * 1024 * 1024,
    cpus: 1.5,
    pidsLimit: 128,
    workspace: { sizeBytes: 4 * 1024 ** 3, required: false },
    user: '1000:1000',
    env: [{ name: 'API_KEY', value: 'secret-value' }],
    testReports: [],
    compareBase: false,
    maxLogBytes: 1000,
    allowedPaths: [],
    protectedPaths: [],
    maxChangedFiles: 2000,
    maxDiffBytes: 1024 * 1024,
    threatReview: 'acknowledge',
    dryRun: false,
    runId: 'r1',
    artifactName: 'airlock-r1',
    policy: NO_POLICY.record,
    ...overrides
  }
}

describe('planRun', () => {
  it('plans the agent phase, and tests only when there is a test command', () => {
    expect(planRun(inputs()).phases.map((p) => p.name)).toEqual(['agent'])
    expect(planRun(inputs({ testCommand: 'npm test' })).phases.map((p) => p.name)).toEqual([
      'agent',
      'tests'
    ])
    expect(
      planRun(inputs({ testCommand: 'npm test', compareBase: true })).phases.map((p) => p.name)
    ).toEqual(['baseline', 'agent', 'tests'])
  })

  it('runs tests without network whatever the agent network is', () => {
    const plan = planRun(inputs({ testCommand: 'npm test' }))
    expect(plan.phases.every((p) => p.network === 'none')).toBe(true)
  })

  it('holds no secret values: env names and the task hash only', () => {
    const text = JSON.stringify(planRun(inputs()))
    expect(text).not.toContain('secret-value')
    expect(text).not.toContain('Fix it')
    expect(planRun(inputs()).env).toEqual(['API_KEY'])
  })

  it('converts limits', () => {
    const plan = planRun(inputs())
    expect(plan.phases[0]).toMatchObject({
      timeoutMs: 120_000,
      graceMs: 5000,
      command: ['/bin/sh', '-c', 'agent --fix']
    })
    expect(plan.sandbox).toMatchObject({
      memoryBytes: 512 * 1024 * 1024,
      cpus: 1.5,
      pidsLimit: 128,
      runtime: 'runc'
    })
  })

  it('plans a pinned image when image is given', () => {
    const ref = `x@sha256:${'b'.repeat(64)}`
    expect(
      planRun(inputs({ dockerfile: undefined, buildContext: undefined, image: ref })).image
    ).toEqual({
      kind: 'pinned',
      ref
    })
  })
})

describe('containerSpec', () => {
  const plan = planRun(inputs({ testCommand: 'npm test', runtime: 'runsc' }))
  const res = {
    imageId: 'sha256:abc',
    workspaceDir: '/tmp/ws',
    taskFile: '/tmp/task.md',
    env: [{ name: 'API_KEY', value: 'v' }]
  }

  it.each(plan.phases.map((p) => [p.name, p] as const))(
    '%s container is hardened',
    (_name, phase) => {
      const spec = createOptions(containerSpec(plan, phase, res))
      const h = spec.HostConfig!
      expect(spec.User).toBe('1000:1000')
      expect(h.CapDrop).toEqual(['ALL'])
      expect(h.CapAdd).toEqual([])
      expect(h.SecurityOpt).toEqual(['no-new-privileges:true'])
      expect(h.ReadonlyRootfs).toBe(true)
      expect(h.Privileged).toBe(false)
      expect(h.Init).toBe(true)
      expect(h.NetworkMode).toBe('none')
      expect(spec.NetworkDisabled).toBe(true)
      expect(h.Memory).toBe(512 * 1024 * 1024)
      expect(h.MemorySwap).toBe(h.Memory)
      expect(h.NanoCpus).toBe(1.5e9)
      expect(h.PidsLimit).toBe(128)
      expect(h.Runtime).toBe('runsc')
      expect(h.IpcMode).toBe('private')
      expect(h.PidMode).toBe('')
      expect(h.UsernsMode).toBe('')
      expect(h.Binds).toEqual([])
      expect(h.Devices).toEqual([])
      expect(h.Tmpfs).toEqual({
        '/tmp': 'rw,noexec,nosuid,nodev,size=268435456,mode=1777,uid=1000,gid=1000'
      })
      expect(h.Mounts).toEqual([
        { Type: 'bind', Source: '/tmp/ws', Target: '/workspace', ReadOnly: false },
        { Type: 'bind', Source: '/tmp/task.md', Target: '/airlock/task.md', ReadOnly: true }
      ])
      expect(JSON.stringify(spec)).not.toContain('docker.sock')
      expect(spec.Labels).toMatchObject({
        'dev.airlock.managed': 'true',
        'dev.airlock.run-id': 'r1',
        'dev.airlock.phase': phase.name
      })
      expect(spec.Env).toContain('API_KEY=v')
      expect(
        spec
          .Env!.filter(
            (e) => !e.startsWith('API_KEY=') && !OFFLINE_ENV.includes(e) && !INSTALL_ENV.includes(e)
          )
          .every((e) => /^(HOME|TMPDIR|AIRLOCK[A-Z_]*)=/.test(e))
      ).toBe(true)
    }
  )
})

describe('package managers in the phases without network', () => {
  const plan = planRun(inputs({ testCommand: 'npm test', compareBase: true }))
  const res = {
    imageId: 'sha256:abc',
    workspaceDir: '/tmp/ws',
    taskFile: '/tmp/task.md',
    env: [{ name: 'PIP_RETRIES', value: '3' }]
  }
  const envOf = (name: string): string[] =>
    containerSpec(
      plan,
      plan.phases.find((p) => p.name === name)!,
      res
    ).env

  it.each(['tests', 'baseline'])('the %s phase fails fast offline instead of retrying', (name) => {
    const env = envOf(name)
    for (const v of [
      'npm_config_offline=true',
      'npm_config_fetch_retries=0',
      'npm_config_audit=false',
      'npm_config_fund=false',
      'npm_config_update_notifier=false',
      'YARN_ENABLE_NETWORK=0',
      'PIP_NO_INDEX=1',
      'PIP_DISABLE_PIP_VERSION_CHECK=1',
      'UV_OFFLINE=1'
    ])
      expect(env).toContain(v)
    // The run's own env replaces one: a repository that needs another value sets it.
    expect(env).toContain('PIP_RETRIES=3')
    expect(env).not.toContain('PIP_RETRIES=0')
  })

  it('the install phase makes no audit, fund or update-check request', () => {
    const withSetup = planRun(
      inputs({
        testCommand: 'npm test',
        setup: { command: 'npm install', presets: [], allow: [] }
      })
    )
    const setup = withSetup.phases.find((p) => p.name === 'setup')!
    const env = containerSpec(withSetup, setup, { ...res, env: [] }).env
    for (const v of ['npm_config_audit=false', 'npm_config_fund=false', 'NO_UPDATE_NOTIFIER=1'])
      expect(env).toContain(v)
    expect(env).not.toContain('npm_config_offline=true')
  })

  it('the agent phase keeps its package managers as they are', () => {
    expect(envOf('agent').some((v) => v.startsWith('npm_config_offline'))).toBe(false)
  })
})
