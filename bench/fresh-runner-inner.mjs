// The inside of the fresh-runner benchmark (bench/fresh-runner.mjs starts it in the simulated
// runner, a container with a Docker engine of its own and no network but loopback). Starts the
// stand-ins (a Docker registry and Verdaccio on loopback, the slow link in front of both, the
// stub model), then runs interleaved rounds of
//   A  the action as `runs.using: node24` starts it (`node /action/dist/index.js`, INPUT_*
//      variables), preset claude-code, on an engine with no image and an empty build cache
//   A' (--restored) the same with the agent image loaded from a saved image first ("the image
//      cache restored") — see docs/BENCHMARKS.md for what this stands for
//   P  (published) the action with images/published.json naming the preset image (built once
//      before the rounds, untimed, pushed to the same registry) and no build args: it pulls the
//      image by digest through the slow link; then P' (published-warm) the same with that image
//      (and the proxy's) already on the engine
//   B  `npm install -g` of the same Claude Code version, then `claude -p` on the same task
// each measured from its start to the stub's first POST /v1/messages. Writes one JSON line per
// measurement to stdout (prefixed `RESULT `); the host prints the table.
import { spawn, spawnSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import * as http from 'node:http'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import { MARK_LINE } from './fresh-runner-table.mjs'

const { values: o } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    mbit: { type: 'string', default: '400' },
    'rtt-ms': { type: 'string', default: '20' },
    base: { type: 'string' },
    'cli-version': { type: 'string' },
    cases: { type: 'string', default: 'cold' },
    gateway: { type: 'string', default: '192.168.213.1' },
    'published-key': { type: 'string' }
  }
})
const RUNNER_UID = 1000
const CASES = o.cases.split(',')
const TASK = 'Write a file GREETING.md that greets the reader.'
const say = (m) => process.stderr.write(`[inner] ${m}\n`)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const sh = (cmd, args, opts = {}) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts })
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: exit ${r.status}\n${r.stderr}`)
  return r.stdout
}
const GW = o.gateway
const REGISTRY = `localhost:5001`
const NPM = `http://${GW}:4874/`

/** A long-running child; its stdout lines go to `onLine` with their arrival time. */
function server(cmd, args, opts = {}, onLine = () => undefined) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts })
  let buf = ''
  child.stdout.setEncoding('utf8').on('data', (d) => {
    buf += d
    let i
    while ((i = buf.indexOf('\n')) >= 0) {
      onLine(buf.slice(0, i), Date.now())
      buf = buf.slice(i + 1)
    }
  })
  child.stderr.setEncoding('utf8').on('data', (d) => {
    if (process.env.FRESH_DEBUG) process.stderr.write(d)
  })
  return child
}

async function until(what, check, ms = 60_000) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check().catch(() => false)) return
    await sleep(200)
  }
  throw new Error(`${what} did not come up`)
}

// --- the stand-ins ---
server('docker-registry', ['serve', '/data/registry/config.yml'])
server('node', [
  '/src/test-tools/registry/node_modules/verdaccio/bin/verdaccio',
  '--config',
  '/data/verdaccio/config.yaml',
  '--listen',
  '127.0.0.1:4873'
])
server('node', [
  '/src/bench/slow-link.mjs',
  '--mbit',
  o.mbit,
  '--rtt-ms',
  o['rtt-ms'],
  '--forward',
  '0.0.0.0:5001=127.0.0.1:5000',
  '--forward',
  '0.0.0.0:4874=127.0.0.1:4873',
  '--forward',
  '0.0.0.0:8091=127.0.0.1:8090'
])
// The stand-in of the Actions cache's blob storage: the saved agent image, when there is one.
http
  .createServer((req, res) => {
    const f = '/data/agent-image.tar.gz'
    if (req.url !== '/agent-image.tar.gz' || !fs.existsSync(f)) {
      res.writeHead(404)
      res.end()
      return
    }
    res.writeHead(200, { 'content-length': fs.statSync(f).size })
    fs.createReadStream(f).pipe(res)
  })
  .listen(8090, '127.0.0.1')
/** Arrival times of the stub's requests. */
const stamps = []
server(
  'node',
  ['--import', '/src/bench/fresh-runner-stamp.mjs', '/src/fixtures/egress/stub-server.mjs'],
  {},
  (line, at) => {
    const m = /^STAMP (\d+) (\S+) (\S+)/.exec(line)
    if (m) stamps.push({ at: Number(m[1]), seenAt: at, method: m[2], url: m[3] })
  }
)
await until('the registry', async () => (await fetch('http://127.0.0.1:5000/v2/')).ok)
await until('Verdaccio', async () => (await fetch('http://127.0.0.1:4873/-/ping')).ok)
await until('the slow link', async () => (await fetch(`${NPM}-/ping`)).ok)
await until('the stub', async () => (await fetch('http://127.0.0.1:8080/hello')).ok)
say('stand-ins up')

/**
 * The preset image as a release publishes it: the preset's Dockerfile on the base stand-in, with
 * the CLI from the npm stand-in, pushed to the registry; and a copy of the action whose
 * images/published.json names it by digest (as `localhost:5001/...`, through the slow link).
 */
const PUBLISHED_ACTION = '/tmp/action-published'
function publishPreset() {
  const local = '127.0.0.1:5000/airlock/claude-code'
  sh('docker', [
    'build',
    '-q',
    '--build-arg',
    `BASE=${REGISTRY}/library/node@${o.base}`,
    '-t',
    `${local}:bench`,
    '/action/images/agents/claude-code'
  ])
  const pushed = sh('docker', ['push', `${local}:bench`])
  const digest = /digest: (sha256:[0-9a-f]{64})/.exec(pushed)?.[1]
  if (!digest) throw new Error(`no digest in the push's output:\n${pushed}`)
  fs.rmSync(PUBLISHED_ACTION, { recursive: true, force: true })
  fs.cpSync('/action', PUBLISHED_ACTION, { recursive: true })
  fs.writeFileSync(
    path.join(PUBLISHED_ACTION, 'images', 'published.json'),
    JSON.stringify({
      version: '0.0.0-bench',
      repository: 'bench/agent-airlock',
      images: {
        'claude-code': {
          image: `${REGISTRY}/airlock/claude-code`,
          digest,
          platforms: { 'linux/amd64': digest },
          inputsKey: o['published-key']
        }
      }
    })
  )
  sh('chmod', ['-R', 'a+rX', PUBLISHED_ACTION])
  resetEngine()
  say(`published the preset image ${REGISTRY}/airlock/claude-code@${digest}`)
}

const firstPost = async (after, deadlineMs) => {
  const end = Date.now() + deadlineMs
  for (;;) {
    const s = stamps.find(
      (x) => x.at >= after && x.method === 'POST' && x.url.includes('/v1/messages')
    )
    if (s) return s.at
    if (Date.now() > end) return null
    await sleep(20)
  }
}

function resetEngine() {
  const q = (args) => sh('docker', args).split('\n').filter(Boolean)
  const containers = q(['ps', '-aq'])
  if (containers.length) sh('docker', ['rm', '-f', '-v', ...containers])
  const images = q(['images', '-aq'])
  if (images.length) spawnSync('docker', ['rmi', '-f', ...new Set(images)], { stdio: 'ignore' })
  spawnSync('docker', ['builder', 'prune', '-af'], { stdio: 'ignore' })
  spawnSync('docker', ['network', 'prune', '-f'], { stdio: 'ignore' })
  spawnSync('docker', ['volume', 'prune', '-f'], { stdio: 'ignore' })
  if (q(['images', '-aq']).length) throw new Error('the engine still has images')
}

let sha = ''
/** A fresh checkout: the demo repository, one commit, owned by the runner's user. */
function checkout(dir) {
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  const repo = path.join(dir, 'repo')
  fs.cpSync('/src/fixtures/demo/repo', repo, { recursive: true })
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'bench',
    GIT_AUTHOR_EMAIL: 'bench@example.invalid',
    GIT_COMMITTER_NAME: 'bench',
    GIT_COMMITTER_EMAIL: 'bench@example.invalid'
  }
  sh('git', ['init', '-q', '-b', 'main'], { cwd: repo, env })
  sh('git', ['add', '-A'], { cwd: repo, env })
  sh('git', ['commit', '-q', '-m', 'demo'], { cwd: repo, env })
  fs.copyFileSync('/certs/ca.crt', path.join(dir, 'upstream-ca.pem'))
  sha = sh('git', ['rev-parse', 'HEAD'], { cwd: repo }).trim()
  sh('chown', ['-R', `${RUNNER_UID}:${RUNNER_UID}`, dir])
  return repo
}

/** The built agent image's own layers (the base's left out, as the action's image cache keeps
 * them), gzipped, for the restored case. */
function saveOwnLayers() {
  const tag = sh('docker', [
    'images',
    '--format',
    '{{.Repository}}:{{.Tag}}',
    'airlock/agent'
  ]).split('\n')[0]
  if (!tag) return
  const baseLayers = JSON.parse(
    sh('docker', [
      'image',
      'inspect',
      '-f',
      '{{json .RootFS.Layers}}',
      `${REGISTRY}/library/node@${o.base}`
    ])
  ).length
  const x = '/tmp/agent-image'
  fs.rmSync(x, { recursive: true, force: true })
  fs.mkdirSync(x)
  sh('sh', ['-c', `docker save ${tag} | tar -x -C ${x}`])
  const [m] = JSON.parse(fs.readFileSync(path.join(x, 'manifest.json'), 'utf8'))
  for (const layer of m.Layers.slice(0, baseLayers))
    fs.rmSync(path.join(x, path.dirname(layer)), { recursive: true, force: true })
  sh('sh', ['-c', `tar -C ${x} -c . | gzip -1 > /data/agent-image.tar.gz`])
  fs.rmSync(x, { recursive: true, force: true })
  say(
    `saved the agent image's own layers: ${Math.round(fs.statSync('/data/agent-image.tar.gz').size / 1e6)} MB gzipped`
  )
}

let runNo = 0
async function ours(kind) {
  runNo++
  const published = kind === 'published' || kind === 'published-warm'
  // published-warm keeps the images the published round pulled (the agent's and the proxy's).
  if (kind === 'published-warm') {
    const containers = sh('docker', ['ps', '-aq']).split('\n').filter(Boolean)
    if (containers.length) sh('docker', ['rm', '-f', '-v', ...containers])
  } else resetEngine()
  const dir = `/tmp/round-${runNo}`
  checkout(dir)
  const gh = path.join(dir, 'gh')
  fs.mkdirSync(gh)
  fs.writeFileSync(path.join(gh, 'event.json'), '{}')
  fs.writeFileSync(path.join(gh, 'output'), '')
  fs.writeFileSync(path.join(gh, 'summary'), '')
  sh('chown', ['-R', `${RUNNER_UID}:${RUNNER_UID}`, gh])
  const base = `${REGISTRY}/library/node@${o.base}`
  const inputs = {
    mode: 'run',
    agent: 'claude-code',
    path: 'repo',
    task: TASK,
    credentials: `ANTHROPIC=https://api.test:8443|AIRLOCK_AGENT_API_KEY|x-api-key|allow=POST /v1/messages`,
    'host-map': `api.test=${GW}`,
    'upstream-ca': 'upstream-ca.pem',
    // The cold cases build the preset on the base stand-in; the published ones pull the image.
    ...(published ? {} : { 'build-args': `BASE=${base}` }),
    'proxy-image': base,
    'image-cache': 'off',
    'dependency-cache': 'off',
    publish: 'false',
    'output-dir': 'out',
    'timeout-minutes': '5',
    'grace-seconds': '2'
  }
  const env = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: path.join(dir, 'home'),
    GITHUB_ACTIONS: 'true',
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_API_URL: 'http://127.0.0.1:9/',
    GITHUB_REPOSITORY: 'octo-org/hello',
    GITHUB_EVENT_NAME: 'workflow_dispatch',
    GITHUB_EVENT_PATH: path.join(gh, 'event.json'),
    GITHUB_WORKSPACE: dir,
    GITHUB_OUTPUT: path.join(gh, 'output'),
    GITHUB_STEP_SUMMARY: path.join(gh, 'summary'),
    GITHUB_RUN_ID: String(4000 + runNo),
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_REF_NAME: 'main',
    GITHUB_SHA: sha,
    RUNNER_TEMP: path.join(dir, 'runner-temp'),
    AIRLOCK_AGENT_API_KEY: 'bench-placeholder-key'
  }
  for (const d of [env.HOME, env.RUNNER_TEMP]) fs.mkdirSync(d, { recursive: true })
  sh('chown', ['-R', `${RUNNER_UID}:${RUNNER_UID}`, env.HOME, env.RUNNER_TEMP])
  for (const [k, v] of Object.entries(inputs)) env[`INPUT_${k.toUpperCase()}`] = v
  const log = []
  const t0 = Date.now()
  let restore = null
  if (kind === 'restored') {
    // The image cache restored, as the action's restoreImage does it: the base pulled by its
    // digest, then the saved file of the image's own layers (gzip, as the Actions cache keeps
    // it) downloaded through the same link into `docker load`. The action (image-cache off)
    // then finds the image by its build key.
    sh('docker', ['pull', '-q', `${REGISTRY}/library/node@${o.base}`])
    const pulled = Date.now()
    const res = await fetch(`http://${GW}:8091/agent-image.tar.gz`)
    const load = spawn('sh', ['-c', 'gzip -dc | docker load -q'], {
      stdio: ['pipe', 'ignore', 'inherit']
    })
    const loaded = new Promise((r) => load.on('exit', r))
    await pipeline(Readable.fromWeb(res.body), load.stdin)
    if ((await loaded) !== 0) throw new Error('docker load failed')
    restore = { pullBase: pulled - t0, downloadAndLoad: Date.now() - pulled }
  }
  const tAction = Date.now()
  const action = server(
    'node',
    [published ? `${PUBLISHED_ACTION}/dist/index.js` : '/action/dist/index.js'],
    { cwd: dir, env, uid: RUNNER_UID, gid: RUNNER_UID },
    (text, at) => log.push({ text, at })
  )
  const exited = new Promise((r) => action.on('exit', (code) => r(code)))
  const first = await Promise.race([firstPost(t0, 600_000), exited.then(() => null)])
  const code = await Promise.race([exited, sleep(300_000).then(() => 'timeout')])
  if (code === 'timeout') action.kill('SIGKILL')
  if (first === null) {
    say(
      `ours (${kind}) never reached the model; exit ${code}\n${log
        .map((l) => l.text)
        .join('\n')
        .slice(-4000)}`
    )
    return { side: kind, ok: false }
  }
  if (kind === 'cold' && CASES.includes('restored') && !fs.existsSync('/data/agent-image.tar.gz'))
    saveOwnLayers()
  let report = null
  try {
    report = JSON.parse(fs.readFileSync(path.join(dir, 'out', 'report.json'), 'utf8'))
  } catch {
    // no report
  }
  return {
    side: kind,
    ok: true,
    ms: first - t0,
    restore,
    actionMs: first - tAction,
    exit: code,
    outcome: report?.outcome,
    source: report?.image?.source,
    steps: report?.cost?.steps,
    // The action's log lines the breakdown reads (bench/fresh-runner-table.mjs), ms from t0.
    lines: log.filter((l) => MARK_LINE.test(l.text)).map((l) => [l.at - t0, l.text.slice(0, 160)]),
    first: first - t0,
    log: process.env.FRESH_DEBUG ? log.map((l) => `${l.at - t0} ${l.text}`) : undefined
  }
}

/**
 * The baseline; with `overlap`, instead the lever check: the engine emptied, then the base's
 * pull and the baseline's `npm install -g` at the same time, on the same link (how far running
 * them side by side could take a cold run).
 */
async function baseline(overlap = false) {
  if (overlap) resetEngine()
  runNo++
  const dir = `/tmp/round-${runNo}`
  const repo = checkout(dir)
  const prefix = path.join(dir, 'npm-global')
  const home = path.join(dir, 'home')
  for (const d of [prefix, home]) fs.mkdirSync(d, { recursive: true })
  sh('chown', ['-R', `${RUNNER_UID}:${RUNNER_UID}`, dir])
  const env = {
    PATH: `${prefix}/bin:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    npm_config_cache: path.join(dir, 'npm-cache'),
    npm_config_prefix: prefix,
    npm_config_registry: NPM
  }
  const run = (cmd, args, extra = {}) =>
    new Promise((resolve) => {
      const c = spawn(cmd, args, {
        cwd: repo,
        env: { ...env, ...extra },
        uid: RUNNER_UID,
        gid: RUNNER_UID,
        stdio: ['ignore', 'pipe', 'pipe']
      })
      let out = ''
      c.stdout.on('data', (d) => (out += d))
      c.stderr.on('data', (d) => (out += d))
      c.on('exit', (code) => resolve({ code, out }))
    })
  const t0 = Date.now()
  const pull = overlap
    ? run('docker', ['pull', '-q', `${REGISTRY}/library/node@${o.base}`]).then((r) => ({
        ...r,
        at: Date.now()
      }))
    : null
  const inst = await run('npm', [
    'install',
    '--global',
    '--no-fund',
    '--no-audit',
    '--no-update-notifier',
    `@anthropic-ai/claude-code@${o['cli-version']}`
  ])
  const t1 = Date.now()
  if (inst.code !== 0) {
    say(`baseline install failed: ${inst.out.slice(-3000)}`)
    return { side: 'baseline', ok: false }
  }
  if (pull) {
    const p = await pull
    if (p.code !== 0) throw new Error(`docker pull failed: ${p.out}`)
    return {
      side: 'overlap',
      ok: true,
      ms: Math.max(p.at, t1) - t0,
      breakdown: { pull: p.at - t0, install: t1 - t0 }
    }
  }
  const agent = run(
    'claude',
    [
      '-p',
      TASK,
      '--permission-mode',
      'bypassPermissions',
      '--output-format',
      'stream-json',
      '--verbose'
    ],
    {
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:8080',
      ANTHROPIC_API_KEY: 'bench-placeholder-key',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_MAX_RETRIES: '2'
    }
  )
  const first = await Promise.race([firstPost(t0, 120_000), agent.then(() => null)])
  const done = await agent
  if (first === null) {
    say(`baseline never reached the model: ${done.out.slice(-3000)}`)
    return { side: 'baseline', ok: false }
  }
  return {
    side: 'baseline',
    ok: true,
    ms: first - t0,
    breakdown: { install: t1 - t0, start: first - t1 }
  }
}

if (CASES.includes('published')) publishPreset()
for (let r = 0; r < Number(o.rounds); r++) {
  for (const c of CASES) {
    if (c === 'overlap') {
      process.stdout.write(`RESULT ${JSON.stringify({ round: r, ...(await baseline(true)) })}\n`)
      continue
    }
    const a = await ours(c)
    process.stdout.write(`RESULT ${JSON.stringify({ round: r, ...a })}\n`)
    const b = await baseline()
    process.stdout.write(`RESULT ${JSON.stringify({ round: r, pair: c, ...b })}\n`)
  }
}
resetEngine()
process.exit(0)
