import * as fs from 'node:fs'
import * as path from 'node:path'
import { ConfigurationError } from '../../src/errors.js'
import { leftovers, makeWorkspace, read, runAirlock, tempDirsOf } from '../support/run.js'

/** Hardening, limits and timeouts, checked against the real daemon from outside and inside. */
describe('the sandbox', () => {
  let ws: string
  beforeEach(() => {
    ws = makeWorkspace()
  })
  afterEach(() => fs.rmSync(ws, { recursive: true, force: true }))

  it('applies every hardening setting (read back from inspect) and they hold from inside', async () => {
    const probe = [
      'id -u > probe-uid',
      'grep -E "^(NoNewPrivs|CapEff|CapPrm|CapBnd):" /proc/self/status > probe-status',
      '(touch /etc/x 2>&1 || true) > probe-usr',
      '(ls /var/run/docker.sock /run/docker.sock 2>&1 || true) > probe-sock',
      'ls /sys/class/net > probe-net',
      '(touch /tmp/ok && echo tmp-writable) > probe-tmp',
      '(printf "#!/bin/sh\\necho ran" > /tmp/x.sh && chmod +x /tmp/x.sh && /tmp/x.sh 2>&1 || true) > probe-noexec',
      'cat /airlock/task.md > probe-task',
      '(sh -c "echo changed >> /airlock/task.md") > probe-task-write 2>&1 || true'
    ].join('; ')
    const run = await runAirlock(ws, {
      'agent-command': probe,
      task: 'the task',
      memory: '300m',
      'pids-limit': '99'
    })
    expect(run.report.outcome).toBe('success')
    const a = run.report.sandbox.applied!
    expect(run.report.sandbox.source).toBe('inspect')
    expect(a).toMatchObject({
      runtime: 'runc',
      network: 'none',
      readOnlyRootfs: true,
      capDrop: ['ALL'],
      noNewPrivileges: true,
      privileged: false,
      init: true,
      memoryBytes: 300 * 1024 * 1024,
      memorySwapBytes: 300 * 1024 * 1024,
      cpus: 1,
      pidsLimit: 99
    })
    expect(a.user).not.toMatch(/^0(:|$)/)
    expect(a.tmpfs['/tmp']).toMatch(/noexec/)
    expect(a.tmpfs['/tmp']).toMatch(/nosuid/)
    // /airlock/out: the agent phase's own folder for usage.json (outside the workspace and diff).
    expect(a.mounts.map((m) => m.target).sort()).toEqual([
      '/airlock/out',
      '/airlock/task.md',
      '/workspace'
    ])
    expect(a.mounts.find((m) => m.target === '/airlock/task.md')?.readOnly).toBe(true)
    expect(a.mounts.some((m) => m.source.includes('docker.sock'))).toBe(false)

    const patch = read(path.join(run.outputDir, 'diff.patch'))
    const probeOf = (name: string): string => {
      const m = new RegExp(`\\+\\+\\+ b/${name}\\n@@[^\\n]*\\n((?:\\+[^\\n]*\\n?)*)`).exec(patch)
      return (m?.[1] ?? '').replace(/^\+/gm, '')
    }
    expect(Number(probeOf('probe-uid').trim())).toBeGreaterThan(0)
    expect(probeOf('probe-status')).toMatch(/NoNewPrivs:\s+1/)
    expect(probeOf('probe-status')).toMatch(/CapEff:\s+0000000000000000/)
    expect(probeOf('probe-status')).toMatch(/CapPrm:\s+0000000000000000/)
    expect(probeOf('probe-usr')).toMatch(/Read-only file system/)
    expect(probeOf('probe-sock')).toMatch(/No such file/)
    expect(probeOf('probe-net').trim()).toBe('lo')
    expect(probeOf('probe-tmp').trim()).toBe('tmp-writable')
    expect(probeOf('probe-noexec')).toMatch(/Permission denied/)
    expect(probeOf('probe-task').trim()).toBe('the task')
    expect(probeOf('probe-task-write')).toMatch(/Read-only file system|Permission denied/)
    expect(await leftovers(run.report.runId)).toBe(0)
    expect(tempDirsOf(run.report.runId)).toEqual([])
  })

  it('lets no runner variable in except those named in env', async () => {
    const environment = {
      ...process.env,
      AIRLOCK_CANARY: 'canary-7f3a9c',
      PASSED_IN: 'passed-value'
    }
    const run = await runAirlock(
      ws,
      {
        'agent-command':
          'env > seen-env; cat /proc/*/environ 2>/dev/null | tr "\\0" "\\n" > seen-proc; echo done',
        env: 'PASSED_IN'
      },
      { environment }
    )
    // The value got in (the agent wrote it into a file); as a secret the run knows, it is masked
    // in diff.patch and the change is a secret-in-diff policy violation.
    expect(run.report.outcome).toBe('policy-violation')
    // One violation per file that holds the value, naming it.
    expect(run.report.policy.violations.map((v) => [v.rule, v.path])).toEqual([
      ['secret-in-diff', 'seen-env'],
      ['secret-in-diff', 'seen-proc']
    ])
    const patch = read(path.join(run.outputDir, 'diff.patch'))
    expect(patch).toContain('seen-env')
    expect(patch).toContain('PASSED_IN=***')
    expect(patch).not.toContain('passed-value')
    for (const file of ['diff.patch', 'report.json', 'logs/agent.log', 'comment.md']) {
      expect(read(path.join(run.outputDir, file))).not.toContain('canary-7f3a9c')
    }
    expect(patch).not.toMatch(/GITHUB_TOKEN|ACTIONS_RUNTIME_TOKEN|RUNNER_/)
  })

  it('ends an agent that ignores SIGTERM: timed-out, logs kept, nothing left behind', async () => {
    const started = Date.now()
    const run = await runAirlock(ws, {
      'agent-command': "echo before-the-hang; trap '' TERM; sleep 1000",
      'timeout-minutes': '0.05',
      'grace-seconds': '2'
    })
    const elapsed = (Date.now() - started) / 1000
    expect(run.report.outcome).toBe('timed-out')
    expect(run.report.agent.timedOut).toBe(true)
    expect(elapsed).toBeLessThan(3 + 2 + 20)
    expect(read(path.join(run.outputDir, 'logs/agent.log'))).toContain('before-the-hang')
    expect(fs.existsSync(path.join(run.outputDir, 'report.json'))).toBe(true)
    expect(await leftovers(run.report.runId)).toBe(0)
    expect(tempDirsOf(run.report.runId)).toEqual([])
  })

  it('stops a fork bomb at the pids limit', async () => {
    const run = await runAirlock(ws, {
      'agent-command': 'bomb() { bomb | bomb & }; bomb; sleep 3; echo host-survived',
      'pids-limit': '50',
      'timeout-minutes': '0.25'
    })
    expect(['success', 'timed-out', 'agent-failed']).toContain(run.report.outcome)
    expect(read(path.join(run.outputDir, 'logs/agent.log'))).toMatch(
      /can't fork|Resource temporarily unavailable/
    )
    expect(run.report.sandbox.applied?.pidsLimit).toBe(50)
    expect(await leftovers(run.report.runId)).toBe(0)
  })

  it('reports an allocation beyond memory as OOM', async () => {
    const run = await runAirlock(ws, {
      'agent-command': 'awk \'BEGIN { s = "x"; while (1) s = s s }\'',
      memory: '48m'
    })
    expect(run.report.outcome).toBe('agent-failed')
    expect(run.report.agent.oomKilled).toBe(true)
    expect(run.report.outcomeReason).toMatch(/memory/)
  })

  it('caps a 200 MB burst of output without holding it in memory', async () => {
    const rssBefore = process.memoryUsage().rss
    const run = await runAirlock(ws, {
      'agent-command': "head -c 200000000 /dev/zero | tr '\\0' 'x'; echo",
      'max-log-bytes': '1000000'
    })
    const rssGrowth = process.memoryUsage().rss - rssBefore
    expect(run.report.outcome).toBe('success')
    expect(run.report.agent.logBytes).toBeGreaterThanOrEqual(200_000_000)
    expect(run.report.agent.logTruncated).toBe(true)
    const size = fs.statSync(path.join(run.outputDir, 'logs/agent.log')).size
    expect(size).toBeLessThan(1_000_000 + 500)
    expect(read(path.join(run.outputDir, 'logs/agent.log'))).toMatch(
      /log truncated: kept the first 1000000 of \d+ bytes/
    )
    expect(rssGrowth).toBeLessThan(150 * 1024 * 1024)
  })

  it('runs on gVisor with runtime runsc', async () => {
    const run = await runAirlock(ws, {
      'agent-command': 'dmesg > kernel.txt 2>&1; cat /proc/version >> kernel.txt',
      runtime: 'runsc'
    })
    expect(run.report.outcome).toBe('success')
    expect(run.report.sandbox.applied?.runtime).toBe('runsc')
    expect(read(path.join(run.outputDir, 'diff.patch'))).toMatch(/gVisor/)
  })

  it('refuses an unknown runtime clearly, never falling back to runc', async () => {
    const run = await runAirlock(ws, { 'agent-command': 'true', runtime: 'nosuch' })
    expect(run.error).toBeInstanceOf(ConfigurationError)
    expect(String((run.error as Error).message)).toMatch(
      /runtime: "nosuch" is not configured in the Docker daemon/
    )
    expect(run.report.agent.exitCode).toBeNull()
    expect(fs.existsSync(path.join(run.outputDir, 'report.json'))).toBe(true)
  })
})
