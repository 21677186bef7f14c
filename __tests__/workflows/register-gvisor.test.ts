/**
 * scripts/register-gvisor.sh, which the reusable workflow runs (with sudo) on a hosted runner and
 * scripts/ensure-docker.sh runs in CI. Everything here works on files and processes the test
 * makes: the daemon.json is a temporary file, and "the daemon" is a stand-in process that reloads
 * that file on SIGHUP and answers `docker info` through a stand-in `docker` on PATH (with stand-ins
 * for systemctl, pidof and apt-get too, so the machine's real daemon is never read, signalled or
 * reconfigured).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { ROOT } from '../../__fixtures__/workflows.js'

const SCRIPT = path.join(ROOT, 'scripts/register-gvisor.sh')
let dir: string
let runsc: string
let config: string

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-register-gvisor-'))
  runsc = path.join(dir, 'runsc')
  fs.writeFileSync(runsc, '#!/bin/sh\nexit 0\n', { mode: 0o755 })
  config = path.join(dir, 'daemon.json')
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

const entries = (p: string) => ({
  runsc: { path: p, runtimeArgs: ['--network=none'] },
  'runsc-net': { path: p, runtimeArgs: ['--network=host'] }
})

function mergeOnly(...extra: string[]) {
  const r = spawnSync(
    'bash',
    [SCRIPT, '--merge-only', '--daemon-json', config, '--runsc', runsc, ...extra],
    { encoding: 'utf8' }
  )
  return { status: r.status, stderr: r.stderr }
}

describe('the daemon.json merge (--merge-only)', () => {
  test('a missing file gets both entries, readable by the daemon', () => {
    expect(mergeOnly().status).toBe(0)
    expect(JSON.parse(fs.readFileSync(config, 'utf8'))).toEqual({ runtimes: entries(runsc) })
    expect(fs.statSync(config).mode & 0o777).toBe(0o644)
  })

  test('an empty file is an empty configuration', () => {
    fs.writeFileSync(config, ' \n')
    expect(mergeOnly().status).toBe(0)
    expect(JSON.parse(fs.readFileSync(config, 'utf8'))).toEqual({ runtimes: entries(runsc) })
  })

  test('every other setting is kept, an existing entry is left as it is, the mode too', () => {
    const before = {
      'log-driver': 'local',
      'registry-mirrors': ['https://mirror.example'],
      runtimes: { kata: { path: '/opt/kata/bin/kata-runtime' }, runsc: { path: '/opt/runsc' } }
    }
    fs.writeFileSync(config, JSON.stringify(before), { mode: 0o600 })
    expect(mergeOnly().status).toBe(0)
    expect(JSON.parse(fs.readFileSync(config, 'utf8'))).toEqual({
      ...before,
      runtimes: { ...before.runtimes, 'runsc-net': entries(runsc)['runsc-net'] }
    })
    expect(fs.statSync(config).mode & 0o777).toBe(0o600)
  })

  test('run again: nothing changes', () => {
    expect(mergeOnly().status).toBe(0)
    const first = fs.readFileSync(config, 'utf8')
    const again = mergeOnly()
    expect(again).toEqual({
      status: 0,
      stderr: expect.stringMatching(/already has runsc and runsc-net/)
    })
    expect(fs.readFileSync(config, 'utf8')).toBe(first)
  })

  test.each([
    ['not JSON', '{"log-driver": "local",', /is not valid JSON/],
    ['JSON with comments', '{\n  // mine\n  "debug": true\n}', /is not valid JSON/],
    ['an array', '[{"runtimes": {}}]', /is not a JSON object/],
    ['a string', '"runtimes"', /is not a JSON object/],
    ['runtimes not a mapping', '{"runtimes": ["runsc"]}', /"runtimes" in .* is not a JSON object/]
  ])('%s is refused with the reason and left as it is', (_name, text, message) => {
    fs.writeFileSync(config, text)
    const r = mergeOnly()
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(message)
    expect(r.stderr).toMatch(/left as it is/)
    expect(r.stderr).toContain(config)
    expect(fs.readFileSync(config, 'utf8')).toBe(text)
    expect(fs.readdirSync(dir).sort()).toEqual(['daemon.json', 'runsc'])
  })

  test('a runsc that is not an executable file is refused', () => {
    fs.chmodSync(runsc, 0o644)
    const r = mergeOnly()
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/runsc ".*" \(--runsc \/ AIRLOCK_RUNSC\) is not an executable file/)
    expect(fs.existsSync(config)).toBe(false)
  })

  test('an unknown argument is refused', () => {
    const r = mergeOnly('--restart')
    expect([r.status, r.stderr]).toEqual([1, expect.stringMatching(/unknown argument --restart/)])
  })
})

describe('registering with a running daemon (a stand-in daemon)', () => {
  let daemon: ChildProcess | undefined
  let bin: string
  let state: string
  let pidFile: string
  let calls: string

  beforeEach(async () => {
    bin = path.join(dir, 'bin')
    fs.mkdirSync(bin)
    state = path.join(dir, 'runtimes.json')
    pidFile = path.join(dir, 'docker.pid')
    calls = path.join(dir, 'calls.log')
    fs.writeFileSync(calls, '')
    const stub = (name: string, body: string) =>
      fs.writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 })
    // `docker info` answers from what the stand-in daemon loaded.
    stub(
      'docker',
      `echo "docker $*" >> "${calls}"\n[ "$1" = info ] && [ -f "${state}" ] || exit 1\n[ "$2" = --format ] && cat "${state}"\nexit 0`
    )
    stub('systemctl', `echo "systemctl $*" >> "${calls}"\nexit 3`)
    stub('pidof', `echo "pidof $*" >> "${calls}"\nexit 1`)
    stub('apt-get', `echo "apt-get $*" >> "${calls}"\nexit 1`)
  })
  afterEach(() => {
    daemon?.kill('SIGKILL')
    daemon = undefined
  })

  /** The stand-in dockerd: loads the runtimes of daemon.json at start and on each SIGHUP. */
  async function startDaemon(): Promise<void> {
    const code = `
      const fs = require('node:fs')
      const [cfg, state, pidFile] = process.argv.slice(1)
      let hups = 0
      const load = () => {
        let r = {}
        try { r = JSON.parse(fs.readFileSync(cfg, 'utf8')).runtimes ?? {} } catch {}
        fs.writeFileSync(state, JSON.stringify({ runc: { path: 'runc' }, ...r }))
      }
      process.on('SIGHUP', () => { hups++; fs.writeFileSync(state + '.hups', String(hups)); load() })
      load()
      fs.writeFileSync(pidFile, String(process.pid))
      setInterval(() => {}, 1000)`
    daemon = spawn(process.execPath, ['-e', code, config, state, pidFile], { stdio: 'ignore' })
    // Until the stand-in has written its whole pid (a loaded machine may take seconds).
    const written = (): string => (fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8') : '')
    for (let i = 0; i < 400 && written() !== String(daemon.pid); i++)
      await new Promise((r) => setTimeout(r, 50))
    expect(written()).toBe(String(daemon.pid))
  }

  const hups = (): number =>
    fs.existsSync(`${state}.hups`) ? Number(fs.readFileSync(`${state}.hups`, 'utf8')) : 0

  function register(...extra: string[]) {
    const r = spawnSync(
      'bash',
      [SCRIPT, '--daemon-json', config, '--pid-file', pidFile, '--runsc', runsc, ...extra],
      { encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } }
    )
    return { status: r.status, stderr: r.stderr }
  }

  test('adds the entries, reloads the daemon once with SIGHUP, waits until docker info lists both', async () => {
    fs.writeFileSync(config, JSON.stringify({ 'log-driver': 'local' }))
    await startDaemon()
    const r = register()
    expect([r.status, r.stderr]).toEqual([
      0,
      expect.stringMatching(/dockerd lists runsc and runsc-net/)
    ])
    expect(hups()).toBe(1)
    expect(JSON.parse(fs.readFileSync(state, 'utf8'))).toMatchObject(entries(runsc))
    expect(JSON.parse(fs.readFileSync(config, 'utf8'))).toEqual({
      'log-driver': 'local',
      runtimes: entries(runsc)
    })
    const log = fs.readFileSync(calls, 'utf8')
    expect(log).not.toMatch(/apt-get|systemctl reload|pidof/)
    expect(daemon?.exitCode).toBeNull()

    // Again: nothing written, no signal.
    const before = fs.readFileSync(config, 'utf8')
    const again = register()
    expect([again.status, again.stderr]).toEqual([
      0,
      expect.stringMatching(/already has the gVisor runtimes/)
    ])
    expect(hups()).toBe(1)
    expect(fs.readFileSync(config, 'utf8')).toBe(before)
  })

  test('entries in the file the daemon has not loaded yet: a reload, no write', async () => {
    fs.writeFileSync(config, '{}')
    await startDaemon()
    fs.writeFileSync(config, JSON.stringify({ runtimes: entries(runsc) }))
    const before = fs.statSync(config).mtimeMs
    expect(register().status).toBe(0)
    expect(hups()).toBe(1)
    expect(fs.statSync(config).mtimeMs).toBe(before)
  })

  test('a malformed daemon.json: refused, not overwritten, the daemon not signalled', async () => {
    fs.writeFileSync(config, '{"runtimes": {')
    await startDaemon()
    const r = register()
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/is not valid JSON .*left as it is/)
    expect(fs.readFileSync(config, 'utf8')).toBe('{"runtimes": {')
    expect(hups()).toBe(0)
  })

  test('--no-reload (the daemon is not running): the file is written, nothing is signalled', () => {
    const r = register('--no-reload')
    expect(r.status).toBe(0)
    expect(JSON.parse(fs.readFileSync(config, 'utf8'))).toEqual({ runtimes: entries(runsc) })
    expect(fs.readFileSync(calls, 'utf8')).not.toMatch(/systemctl reload|pidof/)
  })

  test('a daemon that does not pick the entries up is an error naming the file', async () => {
    await startDaemon()
    // A daemon that ignores SIGHUP (as one started with another --config-file would).
    fs.writeFileSync(
      path.join(bin, 'docker'),
      `#!/bin/sh\n[ "$1" = info ] || exit 1\n[ "$2" = --format ] && echo '{"runc":{"path":"runc"}}'\nexit 0\n`,
      { mode: 0o755 }
    )
    const started = Date.now()
    const r = register('--wait', '1')
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/dockerd did not pick up runsc\/runsc-net from .*daemon\.json/)
    expect(Date.now() - started).toBeLessThan(10_000)
  })
})
