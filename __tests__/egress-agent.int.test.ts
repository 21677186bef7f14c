// A real agent CLI (Claude Code, from npm) in the sandbox with network allowlist: it talks to a
// scripted stub of the Anthropic API (a container of the test's own) only through the proxy,
// with an injected credential, and edits a file of the repository.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import Docker from 'dockerode'
import { getInputs } from '../src/inputs.js'
import { MemoryLogger } from '../src/log.js'
import { runPipeline } from '../src/pipeline.js'
import { planRun } from '../src/plan.js'
import { DockerSandbox } from '../src/sandbox/docker.js'
import {
  buildProxy,
  imageId,
  leftovers,
  makeCerts,
  readTree,
  startStubs,
  uniqueId,
  type StubNet
} from './egress-helpers.js'

/** The Claude Code release the test installs (its native Linux binary ships in this npm package). */
const CLAUDE_PACKAGE = '@anthropic-ai/claude-code-linux-x64@2.1.332'
const CACHE = path.join(os.tmpdir(), 'airlock-npm-cache')

const docker = new Docker()
const SECRET = `canary-secret-${randomBytes(16).toString('hex')}`
let tmp: string
let certs: string
let proxyScript: string
let stubs: StubNet
let claudeBinary: string

/** npm pack (cached), then the binary out of the tarball. */
function claudeFromNpm(dir: string): string {
  fs.mkdirSync(CACHE, { recursive: true })
  const tarball = path.join(
    CACHE,
    `${CLAUDE_PACKAGE.replace(/^@/, '').replace('/', '-').replace(/@.*$/, '')}-${CLAUDE_PACKAGE.split('@')[2]}.tgz`
  )
  if (!fs.existsSync(tarball)) {
    execFileSync('npm', ['pack', CLAUDE_PACKAGE, '--pack-destination', CACHE], { stdio: 'pipe' })
  }
  execFileSync('tar', ['-xzf', tarball, '-C', dir, 'package/claude'])
  const bin = path.join(dir, 'package', 'claude')
  fs.chmodSync(bin, 0o755)
  return bin
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-egress-agent-'))
  fs.chmodSync(tmp, 0o755)
  certs = path.join(tmp, 'certs')
  makeCerts(certs)
  proxyScript = await buildProxy(tmp)
  claudeBinary = claudeFromNpm(tmp)
  stubs = await startStubs(docker, certs)
}, 300_000)

afterAll(async () => {
  await stubs?.remove()
  fs.rmSync(tmp, { recursive: true, force: true })
}, 60_000)

test('Claude Code edits the repository through the proxy; transcript and tokens in the report', async () => {
  const ws = fs.mkdtempSync(path.join(tmp, 'ws-'))
  const repo = path.join(ws, 'repo')
  fs.mkdirSync(repo)
  fs.writeFileSync(path.join(repo, 'README.md'), '# demo\n')
  const git = (args: string[]) =>
    execFileSync('git', args, {
      cwd: repo,
      env: {
        ...process.env,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_AUTHOR_NAME: 'T',
        GIT_AUTHOR_EMAIL: 't@example.invalid',
        GIT_COMMITTER_NAME: 'T',
        GIT_COMMITTER_EMAIL: 't@example.invalid'
      }
    })
  git(['init', '-q', '-b', 'main'])
  git(['add', '-A'])
  git(['commit', '-q', '-m', 'demo'])
  const image = path.join(ws, 'image')
  fs.mkdirSync(image)
  fs.copyFileSync(claudeBinary, path.join(image, 'claude'))
  fs.chmodSync(path.join(image, 'claude'), 0o755)
  fs.writeFileSync(
    path.join(image, 'Dockerfile'),
    'ARG BASE\nFROM ${BASE}\nCOPY claude /usr/local/bin/claude\n'
  )
  fs.copyFileSync(path.join(certs, 'ca.crt'), path.join(ws, 'upstream-ca.pem'))
  const runId = uniqueId('egress-claude')
  const raw: Record<string, string> = {
    path: 'repo',
    dockerfile: 'image/Dockerfile',
    'build-args': `BASE=${imageId('airlock-local/node:18')}`,
    task: 'Write a file GREETING.md that greets the reader.',
    'agent-command':
      'claude -p "$(cat /airlock/task.md)" --permission-mode acceptEdits --output-format stream-json --verbose </dev/null',
    env: 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC\nCLAUDE_CODE_MAX_RETRIES\nDISABLE_AUTOUPDATER',
    network: 'allowlist',
    credentials: 'ANTHROPIC=https://api.test:8443|EGTEST_ANTHROPIC_KEY|x-api-key',
    'host-map': `api.test=${stubs.upstream.ip}`,
    'upstream-ca': 'upstream-ca.pem',
    'proxy-image': imageId('airlock-local/node:18'),
    'proxy-network': stubs.network,
    'output-dir': 'out',
    'timeout-minutes': '3',
    'grace-seconds': '2',
    memory: '1g',
    cpus: '1',
    'run-id': runId
  }
  const inputs = getInputs((n) => raw[n], {
    workspace: ws,
    environment: {
      EGTEST_ANTHROPIC_KEY: SECRET,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      CLAUDE_CODE_MAX_RETRIES: '1',
      DISABLE_AUTOUPDATER: '1'
    },
    hostUid: process.getuid?.() ?? 1000,
    hostCpus: os.cpus().length,
    defaultRunId: runId
  })
  const log = new MemoryLogger()
  const { report } = await runPipeline(
    planRun(inputs),
    { task: inputs.task.text, env: inputs.env, egress: inputs.egress! },
    { sandbox: new DockerSandbox(docker), docker, log, proxyScript, tempRoot: tmp }
  )
  const out = path.join(ws, 'out')
  const agentLog = fs.readFileSync(path.join(out, 'logs', 'agent.log'), 'utf8')
  expect([report.outcome, report.outcomeReason, agentLog.slice(-3000)]).toEqual([
    'success',
    expect.any(String),
    expect.any(String)
  ])
  // The edit the stub model asked for, made by the real CLI.
  expect(report.diff.files.map((f) => f.path)).toEqual(['GREETING.md'])
  expect(fs.readFileSync(path.join(out, 'diff.patch'), 'utf8')).toContain(
    '+Hello from the stub model.'
  )
  // The stub saw the real key; the agent only ever had the placeholder.
  const upstream = await stubs.seen('upstream')
  expect(upstream.auth.length).toBeGreaterThanOrEqual(2)
  expect(new Set(upstream.auth)).toEqual(new Set([`x-api-key: ${SECRET}`]))
  // Transcript and usage.
  const records = fs
    .readFileSync(path.join(out, 'transcript.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { path: string; parsed: { toolCalls: { name: string }[] } })
  expect(records.length).toBeGreaterThanOrEqual(2)
  expect(records.every((r) => r.path.startsWith('/v1/messages'))).toBe(true)
  expect(records.some((r) => r.parsed.toolCalls.some((t) => t.name === 'Write'))).toBe(true)
  const t = report.egress.transcript!
  expect(t.requests).toBe(records.length)
  expect(t.models.length).toBeGreaterThan(0)
  expect(t.tokens.input).toBeGreaterThanOrEqual(240)
  expect(t.tokens.output).toBeGreaterThanOrEqual(37)
  expect(report.cost.tokens).toEqual(t.tokens)
  expect(report.egress.denied).toBe(0)
  for (const f of readTree(out)) expect([f.file, f.text.includes(SECRET)]).toEqual([f.file, false])
  expect(await leftovers(docker, runId)).toEqual([])
}, 300_000)
