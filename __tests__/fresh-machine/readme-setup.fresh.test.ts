/**
 * The README's setup on a machine that has nothing: a new Debian 12 machine (a container of
 * `airlock-local/fresh-machine:1`: Debian bookworm, Node 24 and npm, and the git that cloned the
 * project; no Docker engine, no gVisor, no base image, no node_modules) with a Docker engine of
 * its own inside. In it, a clean clone of this repository at the commit under test (HEAD, or
 * AIRLOCK_FRESH_COMMIT) runs `npm ci && npm run demo`, which must install Debian's docker.io and
 * runsc, start the engine, build the base image with debootstrap and end in `success` with the
 * report written. Slow (about three minutes): its own Jest project, `npm run test:fresh-machine`.
 *
 * The clone reads the repository from a read-only mount; npm and Debian's archive are the only
 * outside hosts the machine uses, as on any new machine.
 */
import { execFileSync } from 'node:child_process'
import * as path from 'node:path'
import {
  DIND_FLAGS,
  docker,
  innerDaemonJson,
  removeDind,
  uniqueName
} from '../../__fixtures__/dind.js'

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..')
const IMAGE = 'airlock-local/fresh-machine:1'
const git = (...args: string[]): string =>
  execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim()

const commit = git(
  'rev-parse',
  '--verify',
  `${process.env.AIRLOCK_FRESH_COMMIT ?? 'HEAD'}^{commit}`
)
const gitDir = git('rev-parse', '--path-format=absolute', '--git-common-dir')
const machine = uniqueName('airlock-fresh-machine')
const cgroupParent = uniqueName('airlock-fresh-engine')
let setup: { status: number | null; output: string }

beforeAll(async () => {
  execFileSync('bash', [path.join(ROOT, 'scripts/prepare-images.sh'), 'fresh-machine'], {
    stdio: 'inherit'
  })
  const started = await docker([
    'run',
    '-d',
    '--name',
    machine,
    ...DIND_FLAGS,
    '-v',
    `${gitDir}:/src/repo.git:ro`,
    IMAGE,
    'sleep',
    'infinity'
  ])
  expect(started).toMatchObject({ status: 0 })
  // The only thing given to the machine besides the clone: its engine's containers get a cgroup
  // parent of their own (the register script must keep this setting when it adds gVisor's).
  const config = await docker(
    ['exec', '-i', machine, 'sh', '-c', 'mkdir -p /etc/docker && cat > /etc/docker/daemon.json'],
    innerDaemonJson(cgroupParent)
  )
  expect(config).toMatchObject({ status: 0 })
  setup = await docker([
    'exec',
    '-e',
    'CI=',
    machine,
    'bash',
    '-c',
    [
      'set -euo pipefail',
      // The repository belongs to another user than the machine's root.
      "git config --global --add safe.directory '*'",
      'git init -q /home/app && cd /home/app',
      `git fetch -q /src/repo.git ${commit} && git -c advice.detachedHead=false checkout -q FETCH_HEAD`,
      'echo "[fresh-machine] $(git rev-parse HEAD)"',
      // The README's two commands.
      'npm ci --no-audit --no-fund && npm run demo'
    ].join('\n')
  ])
}, 15 * 60_000)

afterAll(async () => {
  await removeDind(machine, cgroupParent)
}, 120_000)

test('`npm ci && npm run demo` from a clean clone ends in success with the report written', async () => {
  if (setup.status !== 0) process.stderr.write(setup.output.slice(-6000))
  expect(setup.output).toContain(`[fresh-machine] ${commit}`)
  expect(setup.status).toBe(0)
  expect(setup.output).toMatch(/==> outcome: success/)
  const report = await docker(['exec', machine, 'cat', '/home/app/airlock-out/report.json'])
  expect(report.status).toBe(0)
  expect(JSON.parse(report.output)).toMatchObject({ outcome: 'success' })
})

test('the engine and gVisor came from their real install paths, and gVisor is registered', async () => {
  expect(setup.output).toContain('installing the Docker engine (Debian package docker.io)')
  expect(setup.output).toContain('installing gVisor (package runsc)')
  expect(setup.output).toContain('starting dockerd')
  const runtimes = await docker([
    'exec',
    machine,
    'docker',
    'info',
    '--format',
    '{{json .Runtimes}}'
  ])
  expect(runtimes.status).toBe(0)
  expect(JSON.parse(runtimes.output)).toMatchObject({
    runsc: { path: '/usr/bin/runsc', runtimeArgs: ['--network=none'] },
    'runsc-net': { path: '/usr/bin/runsc', runtimeArgs: ['--network=host'] }
  })
  // The setting given before was kept by the registration.
  const config = await docker(['exec', machine, 'cat', '/etc/docker/daemon.json'])
  expect(JSON.parse(config.output)).toMatchObject({ 'cgroup-parent': cgroupParent })
})

test('the demo used the machine’s own engine, which built the base image there', async () => {
  const images = await docker([
    'exec',
    machine,
    'docker',
    'image',
    'inspect',
    'airlock-local/node:18'
  ])
  expect(images.status).toBe(0)
  expect(setup.output).toMatch(/building airlock-local\/node:18 locally with debootstrap/)
})
