/**
 * The machine's real Docker daemon after scripts/ensure-docker.sh (which CI and `npm test` run
 * first): both gVisor entries are registered as the isolation tiers expect, and running the
 * registration again changes nothing. Read-only: the scripts run here only after `--check` saw
 * both entries, so they neither write /etc/docker/daemon.json nor signal the daemon.
 */
import { spawnSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { ROOT } from '../../__fixtures__/workflows.js'

const DAEMON_JSON = '/etc/docker/daemon.json'

function runtimes(): Record<string, { path: string; runtimeArgs?: string[] }> {
  const r = spawnSync('docker', ['info', '--format', '{{json .Runtimes}}'], { encoding: 'utf8' })
  expect(r.status).toBe(0)
  return JSON.parse(r.stdout) as Record<string, { path: string; runtimeArgs?: string[] }>
}

test('the daemon has runsc without network and runsc-net with the container namespace', () => {
  const check = spawnSync('bash', [path.join(ROOT, 'scripts/register-gvisor.sh'), '--check'])
  expect(check.status).toBe(0)
  const all = runtimes()
  expect(all.runsc.runtimeArgs).toEqual(['--network=none'])
  expect(all['runsc-net'].runtimeArgs).toEqual(['--network=host'])
  expect(all['runsc-net'].path).toBe(all.runsc.path)
})

test.each(['register-gvisor.sh', 'ensure-docker.sh'])(
  '%s again: nothing to do, nothing written',
  (script) => {
    // Only on a daemon that already has both entries (else this would reconfigure it).
    expect(
      spawnSync('bash', [path.join(ROOT, 'scripts/register-gvisor.sh'), '--check']).status
    ).toBe(0)
    const before = fs.existsSync(DAEMON_JSON) ? fs.statSync(DAEMON_JSON).mtimeMs : undefined
    const r = spawnSync('bash', [path.join(ROOT, 'scripts', script)], { encoding: 'utf8' })
    expect([r.status, r.stderr]).toEqual([
      0,
      expect.stringMatching(/already has the gVisor runtimes/)
    ])
    expect(fs.existsSync(DAEMON_JSON) ? fs.statSync(DAEMON_JSON).mtimeMs : undefined).toBe(before)
  }
)
