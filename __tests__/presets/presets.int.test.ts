// Each agent preset end to end: its bundled Dockerfile (the CLI installed from npm in the image
// build, on the local stand-in of the pinned base), its agent command, network allowlist and
// credential route — only the upstream is redirected to a scripted stub of the model API on a
// network of the test's own. The CLI edits the demo repository; the report records the preset,
// the model, the transcript and the token counts; the key never reaches the sandbox.
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
import { AGENT_KEY_ENV, PRESETS } from '../../src/presets/presets.js'
import { runInputs } from '../../src/presets/run-inputs.js'
import { DockerRuntime } from '../../src/sandbox/docker/index.js'
import { ROOT, imageId, leftovers, readTree, uniqueId, egressWorld } from '../egress/helpers.js'
import { GIT_TEST_ENV } from '../support/git.js'
import { LOCAL_EVENT } from '../../src/event.js'
import { testHost } from '../support/host.js'

const docker = new Docker()
const SECRET = `canary-secret-${randomBytes(16).toString('hex')}`

const world = egressWorld('airlock-presets-', { timeoutMs: 300_000 })

/** The demo repository as a fresh one-commit git repository inside a new workspace. */
function demoWorkspace(): string {
  const ws = fs.mkdtempSync(path.join(world.tmp, 'ws-'))
  const repo = path.join(ws, 'repo')
  fs.cpSync(path.join(ROOT, 'fixtures', 'demo', 'repo'), repo, { recursive: true })
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-q', '-m', 'demo']
  ])
    execFileSync('git', args, { cwd: repo, env: GIT_TEST_ENV })
  fs.copyFileSync(path.join(world.certs, 'ca.crt'), path.join(ws, 'upstream-ca.pem'))
  return ws
}

/** Runs the preset as the action would read it: `agent` plus only what this machine needs. */
async function runPreset(
  name: string,
  upstreamPath: string,
  model: string,
  opts: { task?: string; changed?: string[] } = {}
) {
  const preset = PRESETS[name]
  const ws = demoWorkspace()
  const runId = uniqueId(`preset-${name}`)
  // The preset's own route, pointed at the stub (same name, secret variable and header form).
  const route = preset.credentials.replace(
    /=https:\/\/[^|]+/,
    `=https://api.test:8443${upstreamPath}`
  )
  const raw: Record<string, string> = {
    agent: name,
    model,
    path: 'repo',
    // Where no registry is reachable: the local stand-in of the pinned node base.
    'build-args': `BASE=${imageId('airlock-local/node:24-npm')}`,
    task: opts.task ?? 'Write a file GREETING.md that greets the reader.',
    credentials: route,
    'host-map': `api.test=${world.stubs.upstream.ip}`,
    'upstream-ca': 'upstream-ca.pem',
    'proxy-image': imageId('airlock-local/node:18'),
    'proxy-network': world.stubs.network,
    'output-dir': 'out',
    'timeout-minutes': '5',
    'grace-seconds': '2',
    memory: '1g',
    cpus: '1',
    'run-id': runId
  }
  const environment = { [AGENT_KEY_ENV]: SECRET }
  const run = await runInputs((n) => raw[n], {
    workspace: ws,
    env: environment,
    event: LOCAL_EVENT
  })
  const inputs = getInputs(run.read, {
    workspace: ws,
    environment,
    hostUid: process.getuid?.() ?? 1000,
    event: LOCAL_EVENT,
    hostCpus: os.cpus().length,
    defaultRunId: runId,
    ...run.context
  })
  // The preset filled the image, the command and the network.
  expect(inputs.dockerfile).toBe(path.join(ROOT, preset.imageDir, 'Dockerfile'))
  expect(inputs.agentCommand).toBe(preset.command(model))
  expect(inputs.network).toBe('allowlist')
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
  if (report.outcome !== 'success') {
    throw new Error(`${report.outcome}: ${report.outcomeReason}\n${agentLog.slice(-3000)}`)
  }
  expect(report.agent.preset).toBe(name)
  expect(report.diff.files.map((f) => f.path)).toEqual(opts.changed ?? ['GREETING.md'])
  if (opts.changed === undefined)
    expect(fs.readFileSync(path.join(out, 'diff.patch'), 'utf8')).toContain(
      '+Hello from the stub model.'
    )
  // The key: at the stub only, never in the evidence or the log.
  for (const f of readTree(out)) expect([f.file, f.text.includes(SECRET)]).toEqual([f.file, false])
  expect(log.lines.join('\n')).not.toContain(SECRET)
  expect(await leftovers(docker, runId)).toEqual([])
  return { report, agentLog, out }
}

test('claude-code: Claude Code from npm edits the demo repository through the proxy', async () => {
  const before = (await world.stubs.seen('upstream')).auth.length
  const { report } = await runPreset('claude-code', '', 'claude-stub-model')
  const auth = (await world.stubs.seen('upstream')).auth.slice(before)
  expect(new Set(auth)).toEqual(new Set([`x-api-key: ${SECRET}`]))
  const t = report.egress.transcript!
  expect(t.requests).toBeGreaterThanOrEqual(2)
  // `model` reached the CLI: the stub answers with the model it was asked for.
  expect(t.models).toContain('claude-stub-model')
  expect(t.tokens.input).toBeGreaterThanOrEqual(240)
  expect(report.cost.tokens).toMatchObject(t.tokens)
  // Its answer: Claude Code's own final `result`, read from its stream-json events.
  expect(report.agent.message).toMatchObject({ source: 'cli', text: 'Wrote GREETING.md.' })
}, 600_000)

test('codex: Codex from npm edits the demo repository through the proxy', async () => {
  const before = (await world.stubs.seen('upstream')).auth.length
  const { report } = await runPreset('codex', '/v1', 'gpt-stub-model')
  const auth = (await world.stubs.seen('upstream')).auth.slice(before)
  expect(new Set(auth)).toEqual(new Set([`authorization: Bearer ${SECRET}`]))
  const t = report.egress.transcript!
  expect(t.models).toEqual(['gpt-stub-model'])
  expect(t.tokens.input).toBe(200 * t.requests)
  expect(report.cost.tokens).toMatchObject(t.tokens)
  // Its answer: Codex's own final agent message, read from its --json events.
  expect(report.agent.message).toMatchObject({ source: 'cli', text: 'Wrote GREETING.md.' })
}, 600_000)

test('gemini-cli: Gemini CLI from npm edits the demo repository through the proxy', async () => {
  const before = (await world.stubs.seen('upstream')).auth.length
  const { report } = await runPreset('gemini-cli', '', 'gemini-stub-model')
  const auth = (await world.stubs.seen('upstream')).auth.slice(before)
  expect(auth.length).toBeGreaterThanOrEqual(2)
  expect(new Set(auth)).toEqual(new Set([`x-goog-api-key: ${SECRET}`]))
  const t = report.egress.transcript!
  expect(t.requests).toBeGreaterThanOrEqual(2)
  expect(t.models).toContain('gemini-stub-model')
  expect(t.tokens.input).toBeGreaterThanOrEqual(300)
  expect(report.cost.tokens).toMatchObject(t.tokens)
  // Its answer: Gemini CLI's own final message, read from its stream-json events.
  expect(report.agent.message).toMatchObject({ source: 'cli', text: 'Wrote GREETING.md.' })
}, 600_000)

test('claude-code runs commands: the stub model has the CLI run the tests, then hand back its answer and findings', async () => {
  const { report, agentLog, out } = await runPreset('claude-code', '', 'claude-stub-model', {
    task: 'Review the change and run the tests.\nstub-script: review',
    changed: []
  })
  // The shell tool ran (acceptEdits refused every command in -p mode): node --test's own output.
  expect(agentLog).toMatch(/airlock-stub: tests exit \d+/)
  expect(agentLog).toMatch(/ℹ tests \d+/)
  expect(agentLog).not.toContain('requires approval')
  // Its answer from summary.md, its findings from review.json; the CLI's cost claim if it gave one.
  expect(report.agent.message).toMatchObject({ source: 'summary.md' })
  expect(fs.readFileSync(path.join(out, 'agent-message.md'), 'utf8')).toContain(
    'Reviewed the pull request'
  )
  expect(report.findings?.findings.map((f) => f.path)).toEqual(['feature.txt', 'README.md'])
  expect(report.cost.steps?.proxyStartMs).toBeGreaterThan(0)
  // The CLI's own cost report, kept as its claim.
  expect(report.cost.usdSource).toBe('cli')
  expect(report.cost.usd).toBeGreaterThan(0)
}, 600_000)
