/**
 * scripts/register-gvisor.sh on a machine whose package archive has no runsc (as on Ubuntu
 * runners): it installs gVisor's release for the machine's architecture, checked against the
 * release's published SHA-512, and refuses a download that does not match. The machine is a
 * container of the local Debian image (curl added) with no runsc and stand-ins for apt-get and
 * apt-cache that answer like an archive without the package; the release is served by an HTTP
 * server this test starts on loopback (the container shares the host's network namespace to
 * reach it), given to the script with AIRLOCK_GVISOR_RELEASE_URL. Nothing else is contacted.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as http from 'node:http'
import type { AddressInfo } from 'node:net'
import * as os from 'node:os'
import * as path from 'node:path'
import { ROOT } from '../../__fixtures__/workflows.js'

const IMAGE = 'airlock-test/gvisor-release:1'
let server: http.Server
let base: string
let release: Buffer
const requests: string[] = []
let work: string

function ensureImage(): void {
  if (spawnSync('docker', ['image', 'inspect', IMAGE]).status === 0) return
  const dockerfile =
    'FROM airlock-local/node:18\n' +
    'RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends curl >/dev/null && rm -rf /var/lib/apt/lists/*\n'
  execFileSync('docker', ['build', '-q', '-t', IMAGE, '-'], { input: dockerfile })
}

beforeAll(async () => {
  ensureImage()
  // A real runsc binary stands in for the release (the one ensure-docker.sh installed).
  const runsc = execFileSync('bash', ['-c', 'command -v runsc || echo /usr/bin/runsc'])
    .toString()
    .trim()
  release = fs.readFileSync(runsc)
  const digest = createHash('sha512').update(release).digest('hex')
  const files: Record<string, Buffer | string> = {
    '/good/runsc': release,
    '/good/runsc.sha512': `${digest}  runsc\n`,
    // The same published digest, a binary with bytes added.
    '/tampered/runsc': Buffer.concat([release, Buffer.from('\n#tampered\n')]),
    '/tampered/runsc.sha512': `${digest}  runsc\n`,
    '/not-a-digest/runsc': release,
    '/not-a-digest/runsc.sha512': '<html>moved</html>\n',
    '/no-digest/runsc': release
  }
  server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`)
    const body = files[req.url ?? '']
    if (body === undefined) {
      res.writeHead(404).end('not found')
      return
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

beforeEach(() => {
  requests.length = 0
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-gvisor-release-'))
  const stubs = path.join(work, 'stubs')
  fs.mkdirSync(stubs)
  // An archive without runsc: `apt-get update` succeeds, `apt-cache policy runsc` has no candidate.
  fs.writeFileSync(path.join(stubs, 'apt-get'), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
  fs.writeFileSync(
    path.join(stubs, 'apt-cache'),
    '#!/bin/sh\nprintf "runsc:\\n  Installed: (none)\\n  Candidate: (none)\\n  Version table:\\n"\n',
    { mode: 0o755 }
  )
  fs.mkdirSync(path.join(work, 'out'))
})

afterEach(() => {
  fs.rmSync(work, { recursive: true, force: true })
})

/** The script in the container, as root, with the release at `${base}/${folder}`. Asynchronous:
 * the release server runs in this process. */
async function register(
  folder: string,
  after = '',
  script = '/airlock/scripts/register-gvisor.sh'
): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(
    'docker',
    [
      'run',
      '--rm',
      '--network',
      'host',
      '-v',
      `${path.join(ROOT, 'scripts')}:/airlock/scripts:ro`,
      '-v',
      `${path.join(work, 'stubs')}:/stubs:ro`,
      '-v',
      `${path.join(work, 'out')}:/out`,
      '-e',
      `AIRLOCK_GVISOR_RELEASE_URL=${base}/${folder}`,
      '-e',
      'PATH=/stubs:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      IMAGE,
      'bash',
      '-c',
      `command -v runsc && exit 99; bash ${script} --no-reload ` +
        '--daemon-json /out/daemon.json --install-dir /out/bin' +
        after
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] }
  )
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { status, stderr }
}

const installed = (): string => path.join(work, 'out', 'bin', 'runsc')
const daemonJson = (): string => path.join(work, 'out', 'daemon.json')

test('no runsc in the archive: the release is downloaded, checked, installed and registered', async () => {
  const r = await register('good', ' && /out/bin/runsc --version')
  expect([r.status, r.stderr]).toEqual([0, expect.stringMatching(/installed gVisor's release/)])
  expect(r.stderr).toMatch(/package archive has no runsc package/)
  expect(requests).toEqual(['GET /good/runsc.sha512', 'GET /good/runsc'])
  expect(fs.readFileSync(installed()).equals(release)).toBe(true)
  expect(fs.statSync(installed()).mode & 0o777).toBe(0o755)
  const config = JSON.parse(fs.readFileSync(daemonJson(), 'utf8')) as {
    runtimes: Record<string, { path: string; runtimeArgs: string[] }>
  }
  expect(config.runtimes.runsc).toEqual({ path: '/out/bin/runsc', runtimeArgs: ['--network=none'] })
  expect(config.runtimes['runsc-net']).toEqual({
    path: '/out/bin/runsc',
    runtimeArgs: ['--network=host']
  })
})

test('a download that does not match the published SHA-512 is refused: nothing installed or registered', async () => {
  const r = await register('tampered')
  expect([r.status, r.stderr]).toEqual([
    1,
    expect.stringMatching(/does not match its published SHA-512 .*refused, nothing was installed/)
  ])
  expect(requests).toEqual(['GET /tampered/runsc.sha512', 'GET /tampered/runsc'])
  expect(fs.existsSync(path.join(work, 'out', 'bin'))).toBe(false)
  expect(fs.existsSync(daemonJson())).toBe(false)
})

test.each([
  ['not-a-digest', /runsc\.sha512 holds no SHA-512 digest/],
  ['no-digest', /could not download .*\/no-digest\/runsc\.sha512/]
])('%s: without a published digest to check, nothing is installed', async (folder, message) => {
  const r = await register(folder)
  expect([r.status, r.stderr]).toEqual([1, expect.stringMatching(message)])
  expect(fs.existsSync(path.join(work, 'out', 'bin'))).toBe(false)
  expect(fs.existsSync(daemonJson())).toBe(false)
})

test('an archive that has runsc, answered line by line: the package is installed, not reported missing', async () => {
  // apt-cache writes its answer line by line; a reader that stops at the Candidate line (grep -q
  // in a pipe) makes the next write fail with SIGPIPE, which pipefail would turn into "no such
  // package". This stand-in writes the rest after a pause, so that happens every time.
  fs.writeFileSync(
    path.join(work, 'stubs', 'apt-cache'),
    '#!/bin/sh\nprintf "runsc:\\n  Installed: (none)\\n  Candidate: 0.0~20221219.0-2+b3\\n"\n' +
      'sleep 0.3\nprintf "  Version table:\\n     0.0~20221219.0-2+b3 500\\n"\n',
    { mode: 0o755 }
  )
  fs.writeFileSync(
    path.join(work, 'stubs', 'apt-get'),
    '#!/bin/sh\ncase " $* " in *" install "*) printf "#!/bin/sh\\necho runsc\\n" > /usr/local/bin/runsc && chmod 755 /usr/local/bin/runsc ;; esac\n',
    { mode: 0o755 }
  )
  const r = await register('none')
  expect([r.status, r.stderr]).toEqual([
    0,
    expect.stringMatching(/installing gVisor \(package runsc\)/)
  ])
  expect(requests).toEqual([])
  const config = JSON.parse(fs.readFileSync(daemonJson(), 'utf8')) as {
    runtimes: Record<string, { path: string }>
  }
  expect(config.runtimes.runsc.path).toBe('/usr/local/bin/runsc')
})
