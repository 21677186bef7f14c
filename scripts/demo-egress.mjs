// `npm run demo:egress`: the demo with network: allowlist. A scripted agent asks a local stub of
// an Anthropic-style model API (a container this script starts, with its own test CA) how to fix
// the demo repository's bug, only through the egress proxy, with a credential it never sees; the
// tests run before and after in network-less containers. Extra arguments go to `airlock run`.
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { freshDemoRepo, prepareEngineAndNodeImage, root, say } from './demo-common.mjs'
import { makeTestCerts } from './test-ca.mjs'

const docker = (args) => execFileSync('docker', args).toString().trim()

process.chdir(root)
const nodeImage = prepareEngineAndNodeImage()
if (!existsSync(join(root, 'dist', 'proxy.cjs'))) {
  say('building dist/ (the proxy bundle is missing)...')
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' })
}
const demo = freshDemoRepo()

say('a test CA and a certificate for the stub model API (model.airlock.test)...')
const certs = join(demo, 'certs')
makeTestCerts(certs, { names: ['model.airlock.test'], caName: 'airlock demo CA' })
chmodSync(demo, 0o755)

const id = `demo-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`
const network = `airlock-${id}`
const stub = `${network}-model`
const cleanupStub = () => {
  spawnSync('docker', ['rm', '-f', stub], { stdio: 'ignore' })
  spawnSync('docker', ['network', 'rm', network], { stdio: 'ignore' })
}
process.on('exit', cleanupStub)
process.on('SIGINT', () => process.exit(130))
say(`starting the stub model API on network ${network}...`)
docker(['network', 'create', '--label', `dev.airlock.demo=${id}`, network])
docker([
  'run',
  '-d',
  '--name',
  stub,
  '--label',
  `dev.airlock.demo=${id}`,
  '--network',
  network,
  '-e',
  'STUB_NAME=MODEL',
  '-e',
  'STUB_SCRIPT=cart-fix',
  '-v',
  `${join(root, 'fixtures', 'egress', 'stub-server.mjs')}:/stub/stub-server.mjs:ro`,
  '-v',
  `${certs}:/certs:ro`,
  nodeImage,
  'node',
  '/stub/stub-server.mjs'
])
const stubIp = docker([
  'inspect',
  '-f',
  `{{(index .NetworkSettings.Networks "${network}").IPAddress}}`,
  stub
])

// The key exists only on this side: the proxy adds it; the agent gets a placeholder.
const secret = `demo-secret-${randomBytes(16).toString('hex')}`
const out = join(root, 'airlock-out')
const testCommand =
  'node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination=test-results.xml'
const args = [
  join(root, 'dist', 'cli.js'),
  'run',
  '--path',
  '.airlock-demo/repo',
  '--dockerfile',
  'fixtures/egress/demo.Dockerfile',
  '--build-args',
  `BASE=${nodeImage}`,
  '--task',
  'fixtures/demo/task.md',
  '--agent-command',
  'node /opt/demo-agent/agent.mjs',
  '--test-command',
  testCommand,
  '--test-reports',
  'test-results.xml',
  '--compare-base',
  '--network',
  'allowlist',
  '--credentials',
  'ANTHROPIC=https://model.airlock.test|AIRLOCK_DEMO_MODEL_KEY|x-api-key',
  '--host-map',
  `model.airlock.test=${stubIp}:8443`,
  '--upstream-ca',
  '.airlock-demo/certs/ca.crt',
  '--proxy-image',
  nodeImage,
  '--proxy-network',
  network,
  '--timeout-minutes',
  '5',
  '--memory',
  '1g',
  '--cpus',
  '1',
  '--output-dir',
  'airlock-out',
  ...process.argv.slice(2)
]
say('running the agent in the sandbox, network: allowlist...')
const run = spawnSync(process.execPath, args, {
  stdio: 'inherit',
  env: { ...process.env, AIRLOCK_DEMO_MODEL_KEY: secret }
})
if (run.status !== 0) {
  say(`airlock run exited with ${run.status}`)
  process.exit(run.status ?? 1)
}

const seen = JSON.parse(
  execFileSync('docker', [
    'exec',
    stub,
    'node',
    '-e',
    "fetch('http://127.0.0.1:8080/seen').then(r=>r.text()).then(t=>process.stdout.write(t))"
  ]).toString()
)
const leaked = []
const walk = (d) => {
  for (const e of readdirSync(d)) {
    const p = join(d, e)
    if (statSync(p).isDirectory()) walk(p)
    else if (readFileSync(p, 'latin1').includes(secret)) leaked.push(p)
  }
}
walk(out)
const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'))
const e = report.egress
const fmt = (s) => (s ? `${s.passed} passed, ${s.failed} failed` : 'not run')
process.stdout.write(
  [
    '',
    `Outcome:        ${report.outcome}`,
    `Files changed:  ${report.diff.files.map((f) => `${f.path} (+${f.additions} -${f.deletions})`).join(', ') || 'none'}`,
    `Tests before:   ${fmt(report.tests.baseline?.summary)}`,
    `Tests after:    ${fmt(report.tests.summary)}`,
    `Egress:         ${e.allowed} allowed, ${e.denied} denied${e.deniedHosts.length ? ` (${e.deniedHosts.join(', ')})` : ''}`,
    `Model:          ${e.transcript ? `${e.transcript.models.join(', ')}, ${e.transcript.requests} requests, ${e.transcript.tokens.input} in / ${e.transcript.tokens.output} out tokens` : 'no transcript'}`,
    `Key upstream:   ${seen.auth.every((a) => a === `x-api-key: ${secret}`) && seen.auth.length > 0 ? 'the stub model received the real key' : 'NOT as expected'}`,
    `Key in outputs: ${leaked.length === 0 ? 'nowhere' : leaked.join(', ')}`,
    `Evidence:       ${out}/ (report.json, diff.patch, egress.jsonl, transcript.jsonl, comment.md, logs/)`,
    ''
  ].join('\n')
)
process.exit(report.outcome === 'success' && leaked.length === 0 ? 0 : 1)
