// A real agent CLI (Claude Code, from npm) in the sandbox with network allowlist: it talks to a
// scripted stub of the Anthropic API (a container of the test's own) only through the proxy,
// with an injected credential, and edits a file of the repository.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import Docker from 'dockerode'
import { getInputs } from '../../src/inputs.js'
import { MemoryLogger } from '../../src/log.js'
import { runPipeline } from '../../src/pipeline/run.js'
import { planRun, secretsOf } from '../../src/plan.js'
import { DockerRuntime } from '../../src/sandbox/docker/index.js'
import { ROOT, imageId, leftovers, readTree, uniqueId, egressWorld } from './helpers.js'
import { GIT_TEST_ENV } from '../support/git.js'
import { LOCAL_EVENT } from '../../src/event.js'
import { testHost } from '../support/host.js'

/** The releases the tests install (each native Linux binary ships in this npm package). */
const CLAUDE_PACKAGE = '@anthropic-ai/claude-code-linux-x64@2.1.332'
const CODEX_PACKAGE = '@openai/codex@0.171.0-linux-x64'
const CODEX_BINARY = 'package/vendor/x86_64-unknown-linux-musl/bin/codex'
const CACHE = path.join(os.tmpdir(), 'airlock-npm-cache')

const docker = new Docker()
const SECRET = `canary-secret-${randomBytes(16).toString('hex')}`
let claudeBinary: string
let codexBinary: string

/** npm pack (cached), then one file out of the tarball. */
function binaryFromNpm(spec: string, member: string, dir: string): string {
  fs.mkdirSync(CACHE, { recursive: true })
  const [, scope, rest] = /^@([^/]+)\/(.+)$/.exec(spec) ?? []
  const [name, version] = rest.split('@')
  const tarball = path.join(CACHE, `${scope}-${name}-${version}.tgz`)
  if (!fs.existsSync(tarball)) {
    execFileSync('npm', ['pack', spec, '--pack-destination', CACHE], { stdio: 'pipe' })
  }
  const out = fs.mkdtempSync(path.join(dir, 'npm-'))
  execFileSync('tar', ['-xzf', tarball, '-C', out, member])
  const bin = path.join(out, member)
  fs.chmodSync(bin, 0o755)
  return bin
}

const world = egressWorld('airlock-egress-agent-', { timeoutMs: 300_000 })

beforeAll(async () => {
  claudeBinary = binaryFromNpm(CLAUDE_PACKAGE, 'package/claude', world.tmp)
  codexBinary = binaryFromNpm(CODEX_PACKAGE, CODEX_BINARY, world.tmp)
}, 300_000)

interface AgentSetup {
  /** Files of the agent image's build context (name → host path), copied to /usr/local/bin or /opt. */
  files: Record<string, string>
  dockerfile: string
  agentCommand: string
  credentials: string
  env: Record<string, string>
}

/** A one-commit repository, an image with the agent CLI, and an allowlist run against the stub. */
async function runAgent(setup: AgentSetup, runId: string) {
  const ws = fs.mkdtempSync(path.join(world.tmp, 'ws-'))
  const repo = path.join(ws, 'repo')
  fs.mkdirSync(repo)
  fs.writeFileSync(path.join(repo, 'README.md'), '# demo\n')
  const git = (args: string[]) =>
    execFileSync('git', args, {
      cwd: repo,
      env: GIT_TEST_ENV
    })
  git(['init', '-q', '-b', 'main'])
  git(['add', '-A'])
  git(['commit', '-q', '-m', 'demo'])
  const image = path.join(ws, 'image')
  fs.mkdirSync(image)
  for (const [name, source] of Object.entries(setup.files)) {
    fs.copyFileSync(source, path.join(image, name))
    fs.chmodSync(path.join(image, name), 0o755)
  }
  fs.writeFileSync(path.join(image, 'Dockerfile'), setup.dockerfile)
  fs.copyFileSync(path.join(world.certs, 'ca.crt'), path.join(ws, 'upstream-ca.pem'))
  const raw: Record<string, string> = {
    path: 'repo',
    dockerfile: 'image/Dockerfile',
    'build-args': `BASE=${imageId('airlock-local/node:18')}`,
    task: 'Write a file GREETING.md that greets the reader.',
    'agent-command': setup.agentCommand,
    ...(Object.keys(setup.env).length > 0 ? { env: Object.keys(setup.env).join('\n') } : {}),
    network: 'allowlist',
    credentials: setup.credentials,
    'host-map': `api.test=${world.stubs.upstream.ip}`,
    'upstream-ca': 'upstream-ca.pem',
    'proxy-image': imageId('airlock-local/node:18'),
    'proxy-network': world.stubs.network,
    'output-dir': 'out',
    'timeout-minutes': '3',
    'grace-seconds': '2',
    memory: '1g',
    cpus: '1',
    'run-id': runId
  }
  const inputs = getInputs((n) => raw[n], {
    workspace: ws,
    environment: { EGTEST_PROVIDER_KEY: SECRET, ...setup.env },
    hostUid: process.getuid?.() ?? 1000,
    event: LOCAL_EVENT,
    hostCpus: os.cpus().length,
    defaultRunId: runId
  })
  const log = new MemoryLogger()
  const { report } = await runPipeline(planRun(inputs), secretsOf(inputs), {
    runtime: new DockerRuntime(testHost, docker),
    log,
    toolEnv: testHost.toolEnv,
    proxyScript: world.proxyScript,
    tempRoot: world.tmp
  })
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
  const records = fs
    .readFileSync(path.join(out, 'transcript.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map(
      (l) =>
        JSON.parse(l) as {
          path: string
          request: { headers: Record<string, string> }
          parsed: { toolCalls: { name: string }[] }
        }
    )
  for (const f of readTree(out)) expect([f.file, f.text.includes(SECRET)]).toEqual([f.file, false])
  expect(log.lines.join('\n')).not.toContain(SECRET)
  expect(await leftovers(docker, runId)).toEqual([])
  return { report, records, log }
}

test('Claude Code edits the repository through the proxy; transcript and tokens in the report', async () => {
  const before = (await world.stubs.seen('upstream')).auth.length
  const { report, records } = await runAgent(
    {
      files: { claude: claudeBinary },
      dockerfile: 'ARG BASE\nFROM ${BASE}\nCOPY claude /usr/local/bin/claude\n',
      agentCommand:
        'claude -p "$(cat /airlock/task.md)" --permission-mode acceptEdits --output-format stream-json --verbose </dev/null',
      credentials: 'ANTHROPIC=https://api.test:8443|EGTEST_PROVIDER_KEY|x-api-key',
      env: {
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        CLAUDE_CODE_MAX_RETRIES: '1',
        DISABLE_AUTOUPDATER: '1'
      }
    },
    uniqueId('egress-claude')
  )
  // The stub saw the real key; the agent only ever had the placeholder.
  const auth = (await world.stubs.seen('upstream')).auth.slice(before)
  expect(auth.length).toBeGreaterThanOrEqual(2)
  expect(new Set(auth)).toEqual(new Set([`x-api-key: ${SECRET}`]))
  expect(records.length).toBeGreaterThanOrEqual(2)
  expect(records.every((r) => r.path.startsWith('/v1/messages'))).toBe(true)
  expect(records.every((r) => r.request.headers['x-api-key'] === '[REDACTED]')).toBe(true)
  expect(records.some((r) => r.parsed.toolCalls.some((t) => t.name === 'Write'))).toBe(true)
  const t = report.egress.transcript!
  expect(t.requests).toBe(records.length)
  expect(t.models.length).toBeGreaterThan(0)
  expect(t.tokens.input).toBeGreaterThanOrEqual(240)
  expect(t.tokens.output).toBeGreaterThanOrEqual(37)
  expect(report.cost.tokens).toMatchObject(t.tokens)
  expect(report.egress.denied).toBe(0)
}, 300_000)

test('Codex, with the settings of examples/agents/codex, edits the repository through the proxy', async () => {
  const before = (await world.stubs.seen('upstream')).auth.length
  const workflow = fs.readFileSync(
    path.join(ROOT, 'examples', 'agents', 'codex', 'workflow.yml'),
    'utf8'
  )
  // The example's own agent command (a folded YAML scalar): one line, as the action receives it.
  const command = /agent-command: >-\n((?: {6}.*\n)+)/
    .exec(workflow)![1]
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .join(' ')
  const { report, records } = await runAgent(
    {
      files: {
        codex: codexBinary,
        'config.toml': path.join(ROOT, 'examples', 'agents', 'codex', 'config.toml')
      },
      dockerfile:
        'ARG BASE\nFROM ${BASE}\nCOPY codex /usr/local/bin/codex\nCOPY config.toml /opt/airlock/codex/config.toml\n',
      agentCommand: command,
      credentials: 'OPENAI=https://api.test:8443/v1|EGTEST_PROVIDER_KEY|bearer',
      env: {}
    },
    uniqueId('egress-codex')
  )
  const auth = (await world.stubs.seen('upstream')).auth.slice(before)
  expect(auth.length).toBeGreaterThanOrEqual(2)
  expect(new Set(auth)).toEqual(new Set([`authorization: Bearer ${SECRET}`]))
  expect(records.every((r) => r.path === '/v1/responses')).toBe(true)
  expect(records.some((r) => r.parsed.toolCalls.some((t) => t.name === 'exec_command'))).toBe(true)
  const t = report.egress.transcript!
  expect(t.models).toEqual(['gpt-5-codex'])
  expect(t.tokens).toEqual({ input: 200 * records.length, output: 25 + 6 * (records.length - 1) })
  expect(report.cost.tokens).toMatchObject(t.tokens)
}, 300_000)
