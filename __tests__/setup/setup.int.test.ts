// The install phase against a real npm registry (Verdaccio) that the test starts on a network it
// created and seeds itself with packages made here: `npm ci` runs in the sandbox through the egress
// proxy, its install scripts inside the container; the agent, the baseline and the tests start from
// its node_modules, which stays out of the diff.
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import Docker from 'dockerode'
import { getInputs } from '../../src/inputs.js'
import { MemoryLogger } from '../../src/log.js'
import { runPipeline } from '../../src/pipeline/run.js'
import { planRun } from '../../src/plan.js'
import { validateReport } from '../../src/report/schema.js'
import type { Report } from '../../src/report/report.js'
import { DockerRuntime } from '../../src/sandbox/docker/index.js'
import { ROOT, TEST_LABEL, buildProxy, imageId, uniqueId } from '../egress/helpers.js'
import { leftovers } from '../support/run.js'
import { GIT_TEST_ENV } from '../support/git.js'
import { FolderStore } from '../../src/cache/store.js'
import { LOCAL_EVENT } from '../../src/event.js'
import { ConfigurationError } from '../../src/errors.js'
import { testHost } from '../support/host.js'

const docker = new Docker()
const REGISTRY_TOOLS = path.join(ROOT, 'test-tools', 'registry')
const NODE_IMAGE = 'airlock-local/node:18'
let tmp: string
let proxyScript: string
let network: string
let registryIp: string
let agentImage: string
let registry: Docker.Container | undefined

/**
 * The environment for the machine's npm: without the `npm_*` variables that `npm run` (npm test)
 * sets, which would override the test's own npmrc (its registry among them) and change how the
 * lockfile is resolved.
 */
const NPM_ENV = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k))
) as NodeJS.ProcessEnv

/** An image with node and npm (the machine's npm, copied in), built once under a stable tag. */
function nodeNpmImage(): string {
  const npmDir = path.join(
    execFileSync('npm', ['prefix', '-g']).toString().trim(),
    'lib',
    'node_modules',
    'npm'
  )
  const version = JSON.parse(fs.readFileSync(path.join(npmDir, 'package.json'), 'utf8')) as {
    version: string
  }
  const tag = `airlock-test/node-npm:${version.version}`
  try {
    return imageId(tag)
  } catch {
    const ctx = path.join(tmp, 'node-npm')
    fs.cpSync(npmDir, path.join(ctx, 'npm'), { recursive: true })
    fs.writeFileSync(
      path.join(ctx, 'npm.sh'),
      '#!/bin/sh\nexec node /usr/local/lib/npm/bin/npm-cli.js "$@"\n',
      { mode: 0o755 }
    )
    fs.writeFileSync(
      path.join(ctx, 'Dockerfile'),
      `FROM ${imageId(NODE_IMAGE)}\nCOPY npm /usr/local/lib/npm\nCOPY npm.sh /usr/local/bin/npm\n`
    )
    execFileSync('docker', ['build', '-q', '-t', tag, ctx], { stdio: 'pipe' })
    return imageId(tag)
  }
}

async function waitForRegistry(url: string): Promise<void> {
  const deadline = Date.now() + 60_000
  for (;;) {
    try {
      const res = await fetch(`${url}/-/ping`, { signal: AbortSignal.timeout(2000) })
      if (res.ok) return
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error('the test registry did not answer within 60 s')
    await new Promise((r) => setTimeout(r, 500))
  }
}

/** A package made here and published to the test registry. */
function publish(name: string, files: Record<string, string>, scripts?: Record<string, string>) {
  const dir = path.join(tmp, 'pkgs', name)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name, version: '1.0.0', main: 'index.js', ...(scripts ? { scripts } : {}) })
  )
  for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), text)
  const url = `http://${registryIp}:4873/`
  const npmrc = path.join(tmp, 'publish.npmrc')
  fs.writeFileSync(npmrc, `registry=${url}\n//${registryIp}:4873/:_authToken=test\n`)
  execFileSync('npm', ['publish', '--userconfig', npmrc, '--ignore-scripts'], {
    cwd: dir,
    stdio: 'pipe',
    env: NPM_ENV
  })
}

beforeAll(async () => {
  if (!fs.existsSync(path.join(REGISTRY_TOOLS, 'node_modules', 'verdaccio')))
    throw new Error('the test registry is not installed: run bash scripts/ensure-test-tools.sh')
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-setup-test-'))
  fs.chmodSync(tmp, 0o755)
  proxyScript = await buildProxy(tmp)
  agentImage = nodeNpmImage()
  network = uniqueId('airlock-test-registry')
  await docker.createNetwork({
    Name: network,
    Driver: 'bridge',
    Internal: true,
    Labels: { [TEST_LABEL]: 'true' }
  })
  const data = path.join(tmp, 'registry')
  fs.mkdirSync(path.join(data, 'storage'), { recursive: true })
  fs.writeFileSync(
    path.join(data, 'config.yaml'),
    [
      'storage: /data/storage',
      'uplinks: {}',
      'packages:',
      "  '**':",
      '    access: $all',
      '    publish: $all',
      'log: {type: stdout, format: pretty, level: warn}',
      ''
    ].join('\n')
  )
  fs.chmodSync(path.join(data, 'storage'), 0o777)
  registry = await docker.createContainer({
    name: network,
    Image: imageId(NODE_IMAGE),
    Cmd: [
      'node',
      '/opt/registry/node_modules/verdaccio/bin/verdaccio',
      '--config',
      '/data/config.yaml',
      '--listen',
      '0.0.0.0:4873'
    ],
    User: '1000:1000',
    Env: ['HOME=/tmp'],
    Labels: { [TEST_LABEL]: 'true' },
    HostConfig: {
      NetworkMode: network,
      Binds: [`${REGISTRY_TOOLS}:/opt/registry:ro`, `${data}:/data`],
      Memory: 512 * 1024 * 1024
    }
  })
  await registry.start()
  const info = await registry.inspect()
  registryIp = info.NetworkSettings.Networks[network].IPAddress
  await waitForRegistry(`http://${registryIp}:4873`)
  publish('left-pad', { 'index.js': 'module.exports = (s, n) => String(s).padStart(n)\n' })
  // Its install script runs in the sandbox: it records who ran it and tries a host it may not reach.
  publish(
    'airlock-demo-dep',
    {
      'index.js': "module.exports = require('fs').readFileSync(__dirname + '/ran.txt', 'utf8')\n",
      'install.js': [
        "const fs = require('fs')",
        "fs.writeFileSync(__dirname + '/ran.txt', 'install script ran as uid ' + process.getuid())",
        // Through the proxy the sandbox names (Node's http does not read HTTP_PROXY itself).
        'const proxy = new URL(process.env.HTTP_PROXY)',
        "require('http').get({ host: proxy.hostname, port: proxy.port, path: 'http://evil.test/', headers: { host: 'evil.test' } }, (r) => r.resume()).on('error', () => {})",
        ''
      ].join('\n')
    },
    { postinstall: 'node install.js' }
  )
}, 240_000)

afterAll(async () => {
  await registry?.remove({ force: true, v: true }).catch(() => undefined)
  if (network)
    await docker
      .getNetwork(network)
      .remove()
      .catch(() => undefined)
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
}, 60_000)

/** A demo Node project: a lockfile, tests that need the installed packages. */
function demoWorkspace(extra: Record<string, string> = {}): string {
  const ws = fs.mkdtempSync(path.join(tmp, 'ws-'))
  const repo = path.join(ws, 'repo')
  fs.mkdirSync(repo)
  const files: Record<string, string> = {
    '.gitignore': 'node_modules/\n',
    'package.json': JSON.stringify(
      {
        name: 'demo',
        version: '1.0.0',
        private: true,
        dependencies: { 'left-pad': '1.0.0', 'airlock-demo-dep': '1.0.0' }
      },
      null,
      2
    ),
    'index.js': 'module.exports = (n) => String(n)\n',
    'test.js': [
      "const assert = require('assert')",
      "const pad = require('left-pad')",
      "console.log(require('airlock-demo-dep'))",
      "assert.strictEqual(pad('7', 3), '  7')",
      "console.log('tests pass')",
      ''
    ].join('\n'),
    ...extra
  }
  for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(repo, f), text)
  // The lockfile, resolved against the test registry, under the name the sandbox uses for it.
  const npmrc = path.join(tmp, 'lock.npmrc')
  fs.writeFileSync(npmrc, `registry=http://${registryIp}:4873/\n`)
  execFileSync(
    'npm',
    ['install', '--package-lock-only', '--userconfig', npmrc, '--ignore-scripts'],
    {
      cwd: repo,
      stdio: 'pipe',
      env: NPM_ENV
    }
  )
  const lockPath = path.join(repo, 'package-lock.json')
  fs.writeFileSync(
    lockPath,
    fs
      .readFileSync(lockPath, 'utf8')
      .split(`http://${registryIp}:4873/`)
      .join('http://registry.test:4873/')
  )
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-q', '-m', 'demo']
  ])
    execFileSync('git', args, { cwd: repo, env: GIT_TEST_ENV })
  fs.writeFileSync(path.join(ws, 'Dockerfile'), `FROM ${agentImage}\n`)
  return ws
}

async function run(ws: string, runId: string, extra: Record<string, string>, cacheRoot?: string) {
  const raw: Record<string, string> = {
    path: 'repo',
    dockerfile: 'Dockerfile',
    'output-dir': 'out',
    'timeout-minutes': '3',
    'grace-seconds': '2',
    memory: '512m',
    cpus: '1',
    'run-id': runId,
    ...extra
  }
  const inputs = getInputs((n) => raw[n], {
    workspace: ws,
    environment: {},
    hostUid: process.getuid?.() ?? 1000,
    event: LOCAL_EVENT,
    hostCpus: os.cpus().length,
    defaultRunId: runId
  })
  const log = new MemoryLogger()
  const result = await runPipeline(
    planRun(inputs),
    { task: 'use left-pad', env: inputs.env },
    {
      runtime: new DockerRuntime(testHost, docker),
      log,
      toolEnv: testHost.toolEnv,
      proxyScript,
      tempRoot: tmp,
      ...(cacheRoot !== undefined ? { cache: { store: new FolderStore(cacheRoot) } } : {})
    }
  )
  const written: unknown = JSON.parse(fs.readFileSync(result.reportPath, 'utf8'))
  const check = validateReport(written)
  if (!check.valid) throw new Error(`report.json does not validate:\n${check.errors.join('\n')}`)
  return { result, report: written as Report, out: path.join(ws, 'out') }
}

/** The demo's database client: PostgreSQL's wire protocol (trust auth, one simple query). */
const PG_CLIENT = `const net = require('net')
module.exports = (host, sql) => new Promise((resolve, reject) => {
  const s = net.connect(5432, host)
  const params = Buffer.from('user\\0postgres\\0database\\0postgres\\0\\0')
  const start = Buffer.alloc(8)
  start.writeInt32BE(8 + params.length); start.writeInt32BE(196608, 4)
  s.write(Buffer.concat([start, params]))
  let buf = Buffer.alloc(0); const rows = []; let sent = false
  s.on('data', (d) => {
    buf = Buffer.concat([buf, d])
    while (buf.length >= 5 && buf.length >= 1 + buf.readInt32BE(1)) {
      const type = String.fromCharCode(buf[0]); const len = buf.readInt32BE(1)
      const body = buf.subarray(5, 1 + len); buf = buf.subarray(1 + len)
      if (type === 'E') { s.destroy(); return reject(new Error(body.toString())) }
      if (type === 'D') {
        const row = []; let o = 2
        for (let i = 0; i < body.readInt16BE(0); i++) { const l = body.readInt32BE(o); o += 4; row.push(body.subarray(o, o + l).toString()); o += l }
        rows.push(row)
      }
      if (type === 'Z' && !sent) {
        sent = true
        const q = Buffer.from(sql + '\\0'); const h = Buffer.alloc(5); h.write('Q'); h.writeInt32BE(4 + q.length, 1)
        s.write(Buffer.concat([h, q]))
      } else if (type === 'Z') { s.end(); resolve(rows) }
    }
  })
  s.on('error', reject)
})
`

function postgresService(): string {
  return [
    'db:',
    `  image: ${imageId('airlock-local/postgres:15')}`,
    '  user: "101:104"',
    '  command: >-',
    '    initdb -D /tmp/pg -U postgres --auth=trust >/dev/null &&',
    '    echo "host all all all trust" >> /tmp/pg/pg_hba.conf &&',
    "    exec postgres -D /tmp/pg -c listen_addresses='*' -k /tmp",
    '  health: pg_isready -h db -U postgres',
    ''
  ].join('\n')
}

describe('setup-command: the install phase', () => {
  test('npm ci through the proxy to the registry; agent, baseline and tests start from its node_modules; none of it in the diff', async () => {
    const ws = demoWorkspace()
    const runId = uniqueId('setup')
    const { report, out } = await run(ws, runId, {
      'setup-command': 'npm ci --registry http://registry.test:4873/ --no-audit --no-fund',
      'setup-allow-hosts': 'registry.test:4873',
      'proxy-image': imageId(NODE_IMAGE),
      'proxy-network': network,
      'host-map': `registry.test=${registryIp}`,
      // The agent changes the code, drops a file into node_modules, and touches the lockfile.
      'agent-command':
        "echo 'module.exports = (n) => require(\"left-pad\")(n, 3)' > index.js && echo x > node_modules/left-pad/agent-was-here.js && echo ' ' >> package-lock.json",
      'test-command': 'node test.js',
      'compare-base': 'true'
    })
    const setupLog = fs.readFileSync(path.join(out, 'logs/setup.log'), 'utf8')
    expect({ outcome: report.outcome, reason: report.outcomeReason, setupLog }).toMatchObject({
      outcome: 'success'
    })
    const setup = report.setup
    expect(setup?.phase.exitCode).toBe(0)
    expect(setup?.allowHosts).toEqual(['registry.test:4873'])
    // Every request went through the proxy; the install script's try for another host was refused.
    expect(setup?.egress?.allowed).toBeGreaterThan(0)
    expect(setup?.egress?.deniedHosts).toContain('evil.test:80')
    const events = fs.readFileSync(path.join(out, 'logs/setup-egress.jsonl'), 'utf8')
    expect(events).toMatch(/registry\.test/)
    // The install script ran inside the sandbox, as the sandbox user.
    const testsLog = fs.readFileSync(path.join(out, 'logs/tests.log'), 'utf8')
    expect(testsLog).toContain(
      `install script ran as uid ${process.getuid?.() === 0 ? 1000 : process.getuid?.()}`
    )
    expect(testsLog).toContain('tests pass')
    // The baseline ran on a copy of the install's result.
    expect(report.tests.baseline?.phase.exitCode).toBe(0)
    // Lockfile hashes: the install left it alone; the agent changed it, which is flagged.
    const lock = setup?.lockfiles.find((l) => l.path === 'package-lock.json')
    expect(lock?.beforeSetup).toBe(lock?.afterSetup)
    expect(lock?.afterAgent).not.toBe(lock?.afterSetup)
    expect(report.policy.protected.map((f) => [f.rule, f.path])).toEqual(
      expect.arrayContaining([
        ['lockfile-changed', 'package-lock.json'],
        ['protected-paths', 'package-lock.json']
      ])
    )
    // The diff holds the agent's change only: node_modules is build output.
    expect(report.diff.files.map((f) => f.path).sort()).toEqual(['index.js', 'package-lock.json'])
    expect(report.diff.ignored?.entries).toEqual([
      { path: 'node_modules/', rule: 'node_modules/ (.gitignore)' }
    ])
    expect(await leftovers(runId)).toBe(0)
  }, 300_000)

  test('an install whose registry is not in setup-allow-hosts: a configuration error naming the host and the input', async () => {
    const ws = demoWorkspace()
    const runId = uniqueId('setup-denied')
    const { result, report } = await run(ws, runId, {
      'setup-command':
        'npm ci --registry http://registry.test:4873/ --no-audit --no-fund --fetch-retries 0',
      // The right host on the wrong port: the install's registry is refused.
      'setup-allow-hosts': 'registry.test:9999',
      'proxy-image': imageId(NODE_IMAGE),
      'proxy-network': network,
      'host-map': `registry.test=${registryIp}`,
      'agent-command': 'touch agent-ran',
      'test-command': 'true'
    })
    expect(report.outcome).toBe('configuration-error')
    expect(result.error).toBeInstanceOf(ConfigurationError)
    expect(report.outcomeReason).toMatch(
      /^configuration: the setup command failed \(exit \d+\) after its proxy refused 1 host\(s\): registry\.test:4873 not in setup-allow-hosts/
    )
    expect(report.setup?.egress?.denials).toEqual([
      expect.objectContaining({ host: 'registry.test:4873', input: 'setup-allow-hosts' })
    ])
    expect(report.agent.exitCode).toBeNull()
    expect(await leftovers(runId)).toBe(0)
  }, 180_000)

  test('a failing install stops the run before the agent, with its log', async () => {
    const ws = demoWorkspace()
    const runId = uniqueId('setup-fail')
    const { report, out } = await run(ws, runId, {
      'setup-command': 'echo resolving; exit 3',
      'agent-command': 'touch agent-ran',
      'test-command': 'true'
    })
    expect(report.outcome).toBe('infrastructure-error')
    expect(report.outcomeReason).toMatch(/the setup command failed \(exit 3\); see logs\/setup.log/)
    expect(fs.readFileSync(path.join(out, 'logs/setup.log'), 'utf8')).toContain('resolving')
    expect(report.agent.exitCode).toBeNull()
    expect(report.setup?.egress).toBeNull()
    expect(await leftovers(runId)).toBe(0)
  }, 120_000)

  test('dependency cache: the second run with the same lockfile downloads nothing; the agent cannot reach the cache; a poisoned entry is refused', async () => {
    const ws = demoWorkspace({ 'pg.js': PG_CLIENT })
    const cacheRoot = path.join(ws, 'cache')
    // The image's build context holds the Dockerfile only (not the output or cache folders).
    fs.mkdirSync(path.join(ws, 'image'))
    fs.renameSync(path.join(ws, 'Dockerfile'), path.join(ws, 'image', 'Dockerfile'))
    const inputs = {
      dockerfile: 'image/Dockerfile',
      'image-cache': 'off',
      'setup-command': 'npm ci --registry http://registry.test:4873/ --no-audit --no-fund',
      'setup-allow-hosts': 'registry.test:4873',
      'proxy-image': imageId(NODE_IMAGE),
      'proxy-network': network,
      'host-map': `registry.test=${registryIp}`,
      'test-command': 'node test.js'
    }
    const registryRequests = (out: string): number =>
      fs
        .readFileSync(path.join(out, 'logs/setup-egress.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('registry.test')).length
    // Cold: the install downloads from the registry and the entry is written.
    const cold = await run(
      ws,
      uniqueId('cache-cold'),
      { ...inputs, 'agent-command': 'true' },
      cacheRoot
    )
    expect({ outcome: cold.report.outcome, reason: cold.report.outcomeReason }).toMatchObject({
      outcome: 'success'
    })
    expect(registryRequests(cold.out)).toBeGreaterThan(0)
    expect(cold.report.setup?.cache).toMatchObject({
      store: 'folder',
      restored: null,
      saved: 'saved'
    })
    const key = cold.report.setup?.cache?.key as string
    expect(fs.existsSync(path.join(cacheRoot, key, 'npm', '_cacache'))).toBe(true)

    // Warm: not one request reaches the registry. The agent looks for the cache and tries to
    // write into it and into the package manager's cache variable; then it writes a test suite
    // that needs the installed package and the database, which the tests run against the service.
    const warmId = uniqueId('cache-warm')
    const warm = await run(
      ws,
      warmId,
      {
        ...inputs,
        services: postgresService(),
        'agent-command': [
          'echo "cache=[$npm_config_cache][$AIRLOCK_CACHE_DIR]"; ls /airlock',
          '(mkdir -p /airlock/cache/npm && echo poison > /airlock/cache/npm/x) 2>/dev/null || echo cannot-write',
          `cat > db.test.js <<'EOF'
const pad = require('left-pad')
require('./pg.js')('db', "CREATE TABLE t (n int); INSERT INTO t VALUES (7); SELECT n FROM t").then((rows) => {
  console.log('db says ' + pad(rows[0][0], 3))
  if (rows[0][0] !== '7') process.exit(1)
}, (e) => { console.error(e); process.exit(1) })
EOF`
        ].join('\n'),
        'test-command': 'node test.js && node db.test.js'
      },
      cacheRoot
    )
    const warmTests = fs.readFileSync(path.join(warm.out, 'logs/tests.log'), 'utf8')
    expect({ outcome: warm.report.outcome, warmTests }).toMatchObject({ outcome: 'success' })
    expect(warmTests).toContain('db says   7')
    expect(warm.report.services?.map((s) => [s.name, s.healthy])).toEqual([['db', true]])
    // The diff: the agent's test file only; node_modules (build output) is not in it.
    expect(warm.report.diff.files.map((f) => f.path)).toEqual(['db.test.js'])
    expect(warm.report.setup?.cache).toMatchObject({ restored: key, saved: 'exists' })
    expect(registryRequests(warm.out)).toBe(0)
    expect(warm.report.setup?.egress?.allowed).toBe(0)
    const agentLog = fs.readFileSync(path.join(warm.out, 'logs/agent.log'), 'utf8')
    expect(agentLog).toContain('cache=[][]')
    expect(agentLog).toContain('cannot-write')
    expect(fs.readdirSync(path.join(cacheRoot, key, 'npm'))).not.toContain('x')
    expect(await leftovers(warmId)).toBe(0)

    // Poisoned: every cached package content replaced (the integrity in the lockfile no longer
    // matches). npm refuses it and fetches the real packages; the tests see the real code.
    const content = path.join(cacheRoot, key, 'npm', '_cacache', 'content-v2')
    const files: string[] = []
    const walk = (d: string): void => {
      for (const e of fs.readdirSync(d, { withFileTypes: true }))
        if (e.isDirectory()) walk(path.join(d, e.name))
        else files.push(path.join(d, e.name))
    }
    walk(content)
    expect(files.length).toBeGreaterThan(0)
    for (const f of files) fs.writeFileSync(f, 'module.exports = () => "poisoned"\n')
    const poisoned = await run(
      ws,
      uniqueId('cache-poison'),
      { ...inputs, 'agent-command': 'true' },
      cacheRoot
    )
    const setupLog = fs.readFileSync(path.join(poisoned.out, 'logs/setup.log'), 'utf8')
    const testsLog = fs.existsSync(path.join(poisoned.out, 'logs/tests.log'))
      ? fs.readFileSync(path.join(poisoned.out, 'logs/tests.log'), 'utf8')
      : ''
    expect(testsLog).not.toContain('poisoned')
    expect({
      outcome: poisoned.report.outcome,
      reason: poisoned.report.outcomeReason,
      setupLog
    }).toMatchObject({ outcome: 'success' })
    expect(testsLog).toContain('tests pass')
    expect(registryRequests(poisoned.out)).toBeGreaterThan(0)
  }, 300_000)
})

describe('a Node project without a committed lockfile', () => {
  /** The shape of many libraries: `.npmrc` names the registry, the lockfile is ignored. */
  function noLockfileWorkspace(): string {
    const ws = fs.mkdtempSync(path.join(tmp, 'nolock-'))
    const repo = path.join(ws, 'repo')
    fs.mkdirSync(repo)
    const files: Record<string, string> = {
      '.gitignore': 'node_modules/\npackage-lock.json\n',
      '.npmrc': 'registry=http://registry.test:4873/\n',
      'package.json': JSON.stringify(
        {
          name: 'nolock',
          version: '1.0.0',
          private: true,
          dependencies: { 'left-pad': '^1.0.0', 'airlock-demo-dep': '^1.0.0' }
        },
        null,
        2
      ),
      'test.js': "require('assert').strictEqual(require('left-pad')('7', 3), '  7')\n"
    }
    for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(repo, f), text)
    for (const args of [
      ['init', '-q', '-b', 'main'],
      ['add', '-A'],
      ['commit', '-q', '-m', 'no lockfile']
    ])
      execFileSync('git', args, { cwd: repo, env: GIT_TEST_ENV })
    fs.mkdirSync(path.join(ws, 'image'))
    fs.writeFileSync(path.join(ws, 'image', 'Dockerfile'), `FROM ${agentImage}\n`)
    return ws
  }

  test('the documented `npm install`: the resolved tree is recorded; the second run (warm cache) makes zero registry requests', async () => {
    const ws = noLockfileWorkspace()
    const cacheRoot = path.join(ws, 'cache')
    const inputs = {
      dockerfile: 'image/Dockerfile',
      'image-cache': 'off',
      // As docs/setup.md writes it: no --no-audit, --no-fund or --prefer-offline by hand.
      'setup-command': 'npm install',
      'setup-allow-hosts': 'registry.test:4873',
      'proxy-image': imageId(NODE_IMAGE),
      'proxy-network': network,
      'host-map': `registry.test=${registryIp}`,
      'agent-command': 'echo "// checked" >> test.js',
      'test-command': 'node test.js'
    }
    /** Every request the install's proxy saw for the registry, allowed or not. */
    const registryRequests = (out: string): string[] =>
      fs
        .readFileSync(path.join(out, 'logs/setup-egress.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('registry.test'))
    const runs: Awaited<ReturnType<typeof run>>[] = []
    for (const name of ['nolock-cold', 'nolock-warm']) {
      const r = await run(ws, uniqueId(name), inputs, cacheRoot)
      const setupLog = fs.readFileSync(path.join(r.out, 'logs/setup.log'), 'utf8')
      expect({ outcome: r.report.outcome, reason: r.report.outcomeReason, setupLog }).toMatchObject(
        { outcome: 'success' }
      )
      // The install's lockfile is build output here: the diff holds the agent's change only.
      expect(r.report.diff.files.map((f) => f.path)).toEqual(['test.js'])
      expect(r.report.setup?.lockfiles).toEqual([])
      runs.push(r)
      // The next run writes the same output folder.
      fs.renameSync(r.out, path.join(ws, `out-${name}`))
      r.out = path.join(ws, `out-${name}`)
    }
    const [cold, warm] = runs
    // No lockfile committed: the resolved tree is the evidence of what was installed.
    const tree = cold.report.setup?.resolved?.trees
    expect(tree).toEqual([
      {
        kind: 'npm',
        path: 'node_modules/.package-lock.json',
        sha256: expect.stringMatching(/^[a-f0-9]{64}$/),
        total: 2,
        packages: ['airlock-demo-dep@1.0.0', 'left-pad@1.0.0']
      }
    ])
    expect(fs.readFileSync(path.join(cold.out, 'comment.md'), 'utf8')).toContain(
      `resolved: 2 npm packages in <code>node\\_modules/.package-lock.json</code> (sha256 <code>${tree?.[0].sha256?.slice(0, 12)}</code>)`
    )
    // Cold: packages and their metadata came from the registry; no audit or funding request.
    const coldRequests = registryRequests(cold.out)
    expect(coldRequests.length).toBeGreaterThan(0)
    // (npm's audit is a POST of the tree; metadata and tarballs are GETs)
    expect(coldRequests.filter((l) => !l.includes('"method":"GET"'))).toEqual([])
    expect(cold.report.setup?.cache).toMatchObject({ restored: null, saved: 'saved' })
    // Warm: the same tree, and not one request reached the registry.
    expect(warm.report.setup?.cache).toMatchObject({ restored: cold.report.setup?.cache?.key })
    expect(warm.report.setup?.resolved?.trees).toEqual(tree)
    expect(registryRequests(warm.out)).toEqual([])
    expect(warm.report.setup?.egress?.allowed).toBe(0)
  }, 300_000)
})
