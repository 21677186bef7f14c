/**
 * Actions Runner Controller's Docker-in-Docker mode, in its layout: a runner container (not
 * privileged, no engine of its own) and a dind sidecar running dockerd, sharing the runner's work
 * volume at the same path (/home/runner/_work) and the daemon's socket through a second volume;
 * the runner reaches the sidecar with DOCKER_HOST. Two containers built locally, two volumes this
 * test creates. The bundled CLI runs the demo there: with RUNNER_TEMP on the work volume (as the
 * runner sets it for every step) the run succeeds; with its temporary folder where the sidecar
 * cannot see it, the run fails with the reason and the fix instead of an empty workspace.
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
const IMAGE = 'airlock-test/arc-dind:1'
const WORK = '/home/runner/_work'
const name = uniqueName('airlock-arc')
const cgroupParent = `${name}-engine`
const sidecar = `${name}-dind`
const runner = `${name}-runner`
const volumes = [`${name}-work`, `${name}-sock`]
let baseId: string

function ensureImage(): void {
  try {
    execFileSync('docker', ['image', 'inspect', IMAGE], { stdio: 'ignore' })
    return
  } catch {
    // built below
  }
  execFileSync('bash', [path.join(ROOT, 'scripts/prepare-images.sh'), 'node-npm'], {
    stdio: 'inherit'
  })
  // One image for both containers: Debian's docker.io (dockerd and the client), git, Node 24.
  const dockerfile =
    'FROM airlock-local/node:24-npm\n' +
    'RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io iptables git >/dev/null && rm -rf /var/lib/apt/lists/*\n'
  execFileSync('docker', ['build', '-q', '-t', IMAGE, '-'], { input: dockerfile })
}

beforeAll(async () => {
  ensureImage()
  for (const v of volumes)
    expect(await docker(['volume', 'create', v])).toMatchObject({ status: 0 })
  const shared = ['-v', `${volumes[0]}:${WORK}`, '-v', `${volumes[1]}:/var/run`]
  // The sidecar: dockerd on the shared socket, the work volume at the runner's path.
  expect(
    await docker([
      'run',
      '-d',
      '--name',
      sidecar,
      ...DIND_FLAGS,
      ...shared,
      IMAGE,
      'sh',
      '-c',
      `mkdir -p /etc/docker && printf '%s' '${innerDaemonJson(cgroupParent).trim()}' > /etc/docker/daemon.json && exec dockerd --host unix:///var/run/docker.sock >/var/log/dockerd.log 2>&1`
    ])
  ).toMatchObject({ status: 0 })
  // The runner: an ordinary container; the project (dist/ and the demo fixture) read-only.
  expect(
    await docker([
      'run',
      '-d',
      '--name',
      runner,
      ...shared,
      '-v',
      `${ROOT}:/airlock:ro`,
      '-e',
      'DOCKER_HOST=unix:///var/run/docker.sock',
      '-w',
      WORK,
      IMAGE,
      'sleep',
      'infinity'
    ])
  ).toMatchObject({ status: 0 })
  let up = false
  for (let i = 0; i < 60 && !up; i++) {
    up = (await docker(['exec', runner, 'docker', 'info'])).status === 0
    if (!up) await new Promise((r) => setTimeout(r, 500))
  }
  expect(up).toBe(true)
  // No registry: the sidecar gets the local Debian base from this machine's engine.
  const loaded = await docker([
    'exec',
    sidecar,
    'sh',
    '-c',
    'test -S /var/run/docker.sock' // the socket the runner uses is the sidecar's
  ])
  expect(loaded.status).toBe(0)
  execFileSync(
    'bash',
    ['-c', `docker save airlock-local/node:18 | docker exec -i ${sidecar} docker load -q`],
    { stdio: 'ignore' }
  )
  baseId = (
    await docker([
      'exec',
      sidecar,
      'docker',
      'image',
      'inspect',
      '-f',
      '{{.Id}}',
      'airlock-local/node:18'
    ])
  ).output.trim()
  // The repository under test and the demo's fixture on the work volume, as a checkout would be.
  const prepared = await docker([
    'exec',
    runner,
    'bash',
    '-c',
    [
      'set -e',
      `mkdir -p ${WORK}/_temp ${WORK}/app/repo`,
      `cp -r /airlock/fixtures/demo ${WORK}/app/demo`,
      `cp -r /airlock/fixtures/demo/repo/. ${WORK}/app/repo/`,
      `cd ${WORK}/app/repo && git init -q -b main && git add -A`,
      'git -c user.name=Demo -c user.email=demo@example.invalid commit -qm demo'
    ].join('\n')
  ])
  expect(prepared).toMatchObject({ status: 0 })
}, 600_000)

afterAll(async () => {
  await docker(['rm', '-f', runner])
  await removeDind(sidecar, cgroupParent)
  await docker(['volume', 'rm', ...volumes])
}, 120_000)

/** The demo's run with the bundled CLI in the runner container. */
function cliRun(out: string, env: string[]): Promise<{ status: number | null; output: string }> {
  return docker([
    'exec',
    ...env.flatMap((e) => ['-e', e]),
    '-w',
    `${WORK}/app`,
    runner,
    'node',
    '/airlock/dist/cli.js',
    'run',
    '--path',
    'repo',
    '--dockerfile',
    'demo/Dockerfile',
    '--build-args',
    `BASE=${baseId}`,
    '--task',
    'demo/task.md',
    '--agent-command',
    'sh /opt/demo-agent/fix.sh',
    '--test-command',
    'node --test',
    '--compare-base',
    '--timeout-minutes',
    '5',
    '--output-dir',
    out
  ])
}

test('with RUNNER_TEMP on the shared work volume, the run succeeds through the sidecar', async () => {
  const r = await cliRun('out-ok', [`RUNNER_TEMP=${WORK}/_temp`])
  if (r.status !== 0) process.stderr.write(r.output.slice(-4000))
  expect(r.status).toBe(0)
  const report = await docker(['exec', runner, 'cat', `${WORK}/app/out-ok/report.json`])
  expect(JSON.parse(report.output)).toMatchObject({
    outcome: 'success',
    diff: { files: [expect.objectContaining({ path: 'src/cart.js' })] }
  })
  // The runner could not mount a bounded filesystem: the default degrades and says so.
  expect(r.output).toMatch(/workspace is NOT bounded/)
  // Cleanup: the run's temporary folder is gone from the work volume, no container is left.
  const left = await docker(['exec', runner, 'sh', '-c', `ls -A ${WORK}/_temp; docker ps -aq`])
  expect(left).toEqual({ status: 0, output: '' })
})

test('a temporary folder the sidecar cannot see: refused with the reason and the fix', async () => {
  const r = await cliRun('out-unseen', ['RUNNER_TEMP='])
  expect(r.status).not.toBe(0)
  expect(r.output).toMatch(/bind source path does not exist: \/tmp\/airlock-/)
  expect(r.output).toMatch(
    /does not see this folder at the same path.*RUNNER_TEMP=<a folder on that volume>/s
  )
  // No container left, no run folder left in the runner's /tmp (the build lock folder may stay).
  const left = await docker([
    'exec',
    runner,
    'sh',
    '-c',
    'docker ps -aq; ls -A /tmp | grep -v -e ^airlock-locks$ -e ^node-compile-cache$ || true'
  ])
  expect(left).toEqual({ status: 0, output: '' })
})
