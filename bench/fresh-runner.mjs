// P11, a fresh hosted runner simulated on this machine (`npm run bench:fresh-runner`):
//
//   ours      the action as `runs.using: node24` starts it (`node dist/index.js` with INPUT_*
//             variables), preset claude-code, on a Docker engine with no image and no build
//             cache: it pulls the base and the proxy image, builds the preset's image (npm
//             installs Claude Code), starts the egress proxy and the agent
//   baseline  `npm install -g` of the same Claude Code version on the runner, then `claude -p`
//             on the same task (what an action without a sandbox does)
//
// both timed from their start to the stub model's first POST /v1/messages, interleaved, medians.
// The runner is a container with a Docker engine of its own (Docker-in-Docker, the flags of
// __fixtures__/dind.ts) and no network but loopback; inside it a Docker registry (standing in for
// Docker Hub, holding the local stand-in of the pinned node base) and Verdaccio (standing in for
// npm, seeded with the exact Claude Code packages the preset installs) sit behind
// bench/slow-link.mjs, which gives them a hosted runner's round trip and bandwidth.
//
// Options: --rounds N (default 3), --mbit M (default 400), --rtt-ms R (default 20),
// --restored (also the case "image cache restored": a second fresh runner that loads the agent
// image saved by a cold round, downloaded through the same link), --overlap (also the lever
// check: the base's pull and the baseline's npm install at the same time), --published (also
// P11p, the preset image pulled by digest as a release publishes it: built once inside the runner
// before the rounds, untimed, pushed to the same registry, named in the action's
// images/published.json; and P11pw, that image already on the engine), --markdown.
//
// Preparation (not timed; the only step that reaches the npm registry): `npm pack` of the
// preset's Claude Code version and its linux-x64 binary package, `npm view` of its optional
// platform packages (their metadata only), kept in bench/dist/fresh-cache/.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { freePort, startDockerRegistry, stopDockerRegistry } from '../scripts/docker-registry.mjs'
import { makeTestCerts } from '../scripts/test-ca.mjs'
import { formatFresh, summarizeFresh, summarizeOverlap } from './fresh-runner-table.mjs'
import { actionCode, presetKey } from '../scripts/published-images.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
process.chdir(root)
const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    mbit: { type: 'string', default: '400' },
    'rtt-ms': { type: 'string', default: '20' },
    restored: { type: 'boolean', default: false },
    overlap: { type: 'boolean', default: false },
    published: { type: 'boolean', default: false },
    markdown: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false }
  }
})
const say = (m) => process.stderr.write(`[fresh-runner] ${m}\n`)
const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: 'pipe', ...opts }).toString()
const haveImage = (ref) =>
  spawnSync('docker', ['image', 'inspect', ref], { stdio: 'ignore' }).status === 0
function script(name, args = []) {
  const r = spawnSync('bash', [path.join(root, 'scripts', name), ...args], { stdio: 'inherit' })
  if (r.status !== 0) throw new Error(`${name} failed (exit ${r.status})`)
}

// The same flags as __fixtures__/dind.ts (a Docker engine inside a container without --privileged).
const DIND_FLAGS = [
  '--cap-add',
  'ALL',
  '--cap-drop',
  'SYS_RESOURCE',
  '--security-opt',
  'seccomp=unconfined',
  '--security-opt',
  'apparmor=unconfined',
  '--security-opt',
  'systempaths=unconfined',
  '--cgroupns=host',
  '-v',
  '/sys/fs/cgroup:/sys/fs/cgroup:rw',
  '-v',
  '/dev:/dev',
  '-v',
  '/var/lib/docker'
]
/** The runner's inner bridge: the address containers inside reach the stand-ins at. */
const GATEWAY = '192.168.213.1'
const RUNNER_IMAGE = 'airlock-bench/fresh-runner:2'
const HUB_IMAGE = 'airlock-bench/fresh-hub-node:1'

// --- preparation ---
script('ensure-docker.sh')
script('prepare-images.sh', ['fresh-machine'])
script('ensure-test-tools.sh')
if (!haveImage(RUNNER_IMAGE)) {
  // A hosted runner's user: uid 1000, passwordless sudo, in the docker group (here: the socket).
  say(`building ${RUNNER_IMAGE} (Docker engine, sudo, docker-registry)...`)
  sh('docker', ['build', '-q', '-t', RUNNER_IMAGE, '-'], {
    input: [
      'FROM airlock-local/fresh-machine:1',
      'RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io docker-registry iptables ca-certificates procps sudo e2fsprogs mount >/dev/null && rm -rf /var/lib/apt/lists/*',
      "RUN useradd -m -u 1000 runner && echo 'runner ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/runner",
      ''
    ].join('\n')
  })
}
// The stand-in of the pinned node base on "Docker Hub": the local Node 24 image, with npm pointed
// at the stand-in of npm (the preset's Dockerfile installs from npm's default registry).
if (!haveImage(HUB_IMAGE)) {
  sh('docker', ['build', '-q', '-t', HUB_IMAGE, '-'], {
    input: `FROM airlock-local/node:24-npm\nRUN npm config set --location=global registry http://${GATEWAY}:4874/\n`
  })
}
const dockerfile = fs.readFileSync('images/agents/claude-code/Dockerfile', 'utf8')
const cliVersion = /ARG CLAUDE_CODE_VERSION=(\S+)/.exec(dockerfile)?.[1]
if (!cliVersion) throw new Error('no CLAUDE_CODE_VERSION in images/agents/claude-code/Dockerfile')

const cache = path.join(root, 'bench', 'dist', 'fresh-cache')
const pkgs = path.join(cache, `claude-code-${cliVersion}`)
const main = '@anthropic-ai/claude-code'
if (!fs.existsSync(path.join(pkgs, 'done'))) {
  say(`npm pack / npm view of ${main}@${cliVersion} (preparation, the only outside request)...`)
  fs.rmSync(pkgs, { recursive: true, force: true })
  fs.mkdirSync(pkgs, { recursive: true })
  const manifest = JSON.parse(sh('npm', ['view', `${main}@${cliVersion}`, '--json']))
  const names = [main, ...Object.keys(manifest.optionalDependencies ?? {})]
  const manifests = { [main]: manifest }
  for (const n of names.slice(1))
    manifests[n] = JSON.parse(sh('npm', ['view', `${n}@${cliVersion}`, '--json']))
  sh('npm', ['pack', `${main}@${cliVersion}`, `${main}-linux-x64@${cliVersion}`], { cwd: pkgs })
  fs.writeFileSync(path.join(pkgs, 'manifests.json'), JSON.stringify(manifests))
  fs.writeFileSync(path.join(pkgs, 'done'), '')
}

const id = `fresh-${process.pid}-${randomBytes(3).toString('hex')}`
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-bench-fresh-'))
const data = path.join(tmp, 'data')
let runner = null
// The inner engine's containers' cgroups: under a parent of their own, removed at the end.
const cgroupParent = `airlock-bench-${id}`
try {
  // Verdaccio's storage: the packuments of the preset's version, tarballs of the main and linux-x64
  // packages (npm fetches the other platforms' metadata, never their tarballs).
  const storage = path.join(data, 'verdaccio', 'storage')
  const manifests = JSON.parse(fs.readFileSync(path.join(pkgs, 'manifests.json'), 'utf8'))
  for (const [name, m] of Object.entries(manifests)) {
    const dir = path.join(storage, name)
    fs.mkdirSync(dir, { recursive: true })
    const file = `${name.split('/')[1]}-${cliVersion}.tgz`
    const packed = path.join(pkgs, `${name.slice(1).replace('/', '-')}-${cliVersion}.tgz`)
    if (fs.existsSync(packed)) {
      fs.copyFileSync(packed, path.join(dir, file))
      const bytes = fs.readFileSync(packed)
      const integrity = `sha512-${createHash('sha512').update(bytes).digest('base64')}`
      if (m.dist.integrity !== integrity)
        throw new Error(`${name}: packed tarball differs from the registry's`)
    }
    const now = new Date().toISOString()
    const version = {
      ...m,
      dist: { ...m.dist, tarball: `http://registry.invalid/${name}/-/${file}` }
    }
    delete version.time
    delete version['dist-tags']
    delete version.versions
    fs.writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({
        name,
        versions: { [cliVersion]: version },
        'dist-tags': { latest: cliVersion },
        time: { modified: now, created: now, [cliVersion]: now },
        _attachments: {},
        _uplinks: {},
        _distfiles: {},
        _rev: '1-0000000000000000'
      })
    )
  }
  fs.writeFileSync(
    path.join(data, 'verdaccio', 'config.yaml'),
    "storage: /data/verdaccio/storage\nuplinks: {}\npackages:\n  '**':\n    access: $all\n    publish: $all\nlog: {type: stdout, format: pretty, level: warn}\n"
  )

  // "Docker Hub": a registry holding the node base under library/node, pushed here, served inside.
  say('pushing the node base stand-in into a registry folder...')
  const port = await freePort()
  const reg = await startDockerRegistry(path.join(data, 'registry-host'), port)
  const ref = `localhost:${port}/library/node:24-bookworm-slim`
  let digest
  try {
    sh('docker', ['tag', HUB_IMAGE, ref])
    const pushed = sh('docker', ['push', ref])
    digest = /digest: (sha256:[0-9a-f]{64})/.exec(pushed)?.[1]
    if (!digest) throw new Error(`no digest in the push's output:\n${pushed}`)
  } finally {
    spawnSync('docker', ['rmi', ref], { stdio: 'ignore' })
    await stopDockerRegistry(reg)
  }
  fs.mkdirSync(path.join(data, 'registry'), { recursive: true })
  fs.renameSync(path.join(data, 'registry-host', 'data'), path.join(data, 'registry', 'data'))
  fs.writeFileSync(
    path.join(data, 'registry', 'config.yml'),
    'version: 0.1\nlog: {level: error}\nstorage: {filesystem: {rootdirectory: /data/registry/data}}\nhttp: {addr: 127.0.0.1:5000}\n'
  )
  makeTestCerts(path.join(tmp, 'certs'), {
    names: ['api.test'],
    caName: 'fresh-runner bench CA',
    days: 1
  })

  // The action as it ships: dist/ bundled from the current sources, its images/ and package.json.
  say('bundling the action from src/ into bench/dist/fresh-action/...')
  const action = path.join(root, 'bench', 'dist', 'fresh-action')
  fs.rmSync(action, { recursive: true, force: true })
  sh(process.execPath, ['scripts/build.mjs', path.join(action, 'dist')])
  fs.cpSync('images', path.join(action, 'images'), { recursive: true })
  fs.copyFileSync('package.json', path.join(action, 'package.json'))
  fs.copyFileSync('action.yml', path.join(action, 'action.yml'))

  // The key of the preset's build inputs, as the release's table records it (scripts/published-images.mjs).
  const publishedKey = flags.published
    ? await presetKey(await actionCode(), 'claude-code', action)
    : undefined

  fs.writeFileSync(
    path.join(data, 'daemon.json'),
    JSON.stringify({ 'cgroup-parent': cgroupParent, bip: `${GATEWAY}/24` }) + '\n'
  )
  const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  say(`starting the simulated runner (load ${load})...`)
  runner = `airlock-bench-${id}`
  const inner = [
    'set -e',
    'mkdir -p /etc/docker && cp /data/daemon.json /etc/docker/daemon.json',
    '(dockerd >/var/log/dockerd.log 2>&1 &)',
    'for i in $(seq 1 100); do docker info >/dev/null 2>&1 && break; sleep 0.2; done',
    'chmod 666 /var/run/docker.sock',
    `exec node /src/bench/fresh-runner-inner.mjs --rounds ${flags.rounds} --mbit ${flags.mbit} --rtt-ms ${flags['rtt-ms']} --base ${digest} --cli-version ${cliVersion} --cases ${['cold', ...(flags.restored ? ['restored'] : []), ...(flags.published ? ['published', 'published-warm'] : []), ...(flags.overlap ? ['overlap'] : [])].join(',')} --gateway ${GATEWAY}${publishedKey ? ` --published-key ${publishedKey}` : ''}`
  ].join('\n')
  const child = spawn(
    'docker',
    [
      'run',
      '--name',
      runner,
      '--network',
      'none',
      ...DIND_FLAGS,
      '-v',
      `${root}:/src:ro`,
      '-v',
      `${action}:/action:ro`,
      '-v',
      `${data}:/data`,
      '-v',
      `${path.join(tmp, 'certs')}:/certs:ro`,
      ...(process.env.FRESH_DEBUG ? ['-e', 'FRESH_DEBUG=1'] : []),
      RUNNER_IMAGE,
      'bash',
      '-c',
      inner
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] }
  )
  const results = []
  let buf = ''
  child.stdout.setEncoding('utf8').on('data', (d) => {
    buf += d
    let i
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i)
      buf = buf.slice(i + 1)
      if (line.startsWith('RESULT ')) {
        const r = JSON.parse(line.slice(7))
        results.push(r)
        say(`round ${r.round + 1} ${r.side}: ${r.ok ? `${r.ms} ms` : 'FAILED'}`)
      } else process.stderr.write(`${line}\n`)
    }
  })
  const code = await new Promise((r) => child.on('exit', r))
  const loadAfter = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  fs.writeFileSync(
    path.join(root, 'bench', 'dist', 'fresh-results.json'),
    JSON.stringify(results, null, 1)
  )
  const summary = summarizeFresh(results)
  process.stdout.write(
    formatFresh(summary, {
      markdown: flags.markdown,
      link: `${flags.mbit} Mbit/s, ${flags['rtt-ms']} ms round trip`,
      load: `${load} before, ${loadAfter} after`,
      overlap: summarizeOverlap(results)
    })
  )
  if (code !== 0) say(`the runner exited ${code}`)
} finally {
  if (runner !== null) {
    spawnSync(
      'docker',
      [
        'exec',
        runner,
        'sh',
        '-c',
        'docker ps -aq | xargs -r docker rm -f >/dev/null 2>&1; kill $(cat /var/run/docker.pid) 2>/dev/null; sleep 2; true'
      ],
      { stdio: 'ignore' }
    )
    spawnSync('docker', ['rm', '-f', '-v', runner], { stdio: 'ignore' })
  }
  // The inner engine's (now empty) cgroup folders, deepest first (one per container inside).
  const cg = '/sys/fs/cgroup'
  const tops = fs.existsSync(`${cg}/${cgroupParent}`)
    ? [`${cg}/${cgroupParent}`]
    : fs
        .readdirSync(cg)
        .map((c) => `${cg}/${c}/${cgroupParent}`)
        .filter((d) => fs.existsSync(d))
  const rmEmpty = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }))
      if (e.isDirectory()) rmEmpty(path.join(dir, e.name))
    try {
      fs.rmdirSync(dir)
    } catch {
      // not empty (a process still in it) or already gone
    }
  }
  for (const dir of tops) rmEmpty(dir)
  if (!flags.keep) fs.rmSync(tmp, { recursive: true, force: true })
}
