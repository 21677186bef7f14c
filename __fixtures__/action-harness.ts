/**
 * Runs the bundled action the way the Actions runner does: `node dist/index.js` with `INPUT_*`
 * variables, `GITHUB_EVENT_PATH` pointing at a webhook payload, `GITHUB_OUTPUT` and
 * `GITHUB_STEP_SUMMARY` files, and `GITHUB_API_URL` pointing at the local stand-in.
 */
import { execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import { createRequire } from 'node:module'
import * as os from 'node:os'
import * as path from 'node:path'
import { PROVENANCE_FILE, buildStatement } from '../src/report/provenance.js'
import { renderComment } from '../src/report/comment.js'
import type { Outcome, Report } from '../src/report/report.js'
import { emptyReport } from '../src/report/empty.js'
import { fixturePlan } from './plan.js'
import { ACTIONS_BOT, GitHubStandIn } from './github-stand-in.js'
import type { User } from './github-stand-in.js'

const require = createRequire(import.meta.url)
export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
export const NODE = process.env.AIRLOCK_E2E_NODE ?? process.execPath

export interface ActionRun {
  code: number | null
  stdout: string
  stderr: string
  outputs: Record<string, string>
  summary: string
}

export interface RunOptions {
  inputs: Record<string, string>
  eventName: string
  payload: unknown
  apiUrl: string
  workspace: string
  env?: Record<string, string>
}

/** Parses the `name<<delimiter` blocks the toolkit writes to GITHUB_OUTPUT. */
function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const m = /^([^<]+)<<(.+)$/.exec(lines[i])
    if (!m) continue
    const value: string[] = []
    for (i++; i < lines.length && lines[i] !== m[2]; i++) value.push(lines[i])
    out[m[1]] = value.join('\n')
  }
  return out
}

export async function runAction(o: RunOptions): Promise<ActionRun> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-e2e-run-'))
  const eventPath = path.join(tmp, 'event.json')
  fs.writeFileSync(eventPath, JSON.stringify(o.payload))
  const outputFile = path.join(tmp, 'output')
  const summaryFile = path.join(tmp, 'summary')
  fs.writeFileSync(outputFile, '')
  fs.writeFileSync(summaryFile, '')
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: tmp,
    GITHUB_ACTIONS: 'true',
    GITHUB_API_URL: o.apiUrl,
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_REPOSITORY: 'octo-org/hello',
    GITHUB_EVENT_NAME: o.eventName,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_WORKSPACE: o.workspace,
    GITHUB_OUTPUT: outputFile,
    GITHUB_STEP_SUMMARY: summaryFile,
    GITHUB_RUN_ID: '4242',
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_REF_NAME: 'main',
    RUNNER_TEMP: tmp,
    ...o.env
  }
  for (const [k, v] of Object.entries(o.inputs)) env[`INPUT_${k.toUpperCase()}`] = v
  // The comment or review the event announces exists on GitHub before the event is delivered.
  GitHubStandIn.at(o.apiUrl)?.deliver(o.eventName, o.payload as Record<string, unknown>)
  const child = spawn(NODE, [path.join(ROOT, 'dist/index.js')], { env, cwd: o.workspace })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')))
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')))
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  const result = {
    code,
    stdout,
    stderr,
    outputs: parseOutputs(fs.readFileSync(outputFile, 'utf8')),
    summary: fs.readFileSync(summaryFile, 'utf8')
  }
  fs.rmSync(tmp, { recursive: true, force: true })
  return result
}

// ---- webhook payloads ----------------------------------------------------------------------

interface ExampleGroup {
  name: string
  examples: Record<string, unknown>[]
}

const examples = require('@octokit/webhooks-examples/api.github.com/index.json') as ExampleGroup[]

let nextWebhookId = 3_000_000

/**
 * A real example payload of `event` (the first whose `action` matches), pointed at our test
 * repository. `adjust` changes what the test needs (numbers, SHAs, users) on a deep copy.
 */
export function webhook(
  event: string,
  action: string | undefined,
  adjust: (p: Record<string, any>) => void // eslint-disable-line @typescript-eslint/no-explicit-any
): Record<string, unknown> {
  const group = examples.find((g) => g.name === event)
  const found = group?.examples.find((e) => action === undefined || e.action === action)
  if (!found) throw new Error(`no ${event}/${action} example payload`)
  const p = structuredClone(found) as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
  // Each comment and review its own id, as on GitHub (the examples all share one).
  if (p.comment) p.comment.id = nextWebhookId++
  if (p.review) p.review.id = nextWebhookId++
  if (p.repository) {
    p.repository.name = 'hello'
    p.repository.full_name = 'octo-org/hello'
    p.repository.owner.login = 'octo-org'
  }
  adjust(p)
  return p
}

// ---- repositories and run folders ------------------------------------------------------------

export function gitIn(dir: string, args: string[], input?: string | Buffer): string {
  return execFileSync('git', args, {
    cwd: dir,
    input,
    env: {
      ...process.env,
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Dev',
      GIT_AUTHOR_EMAIL: 'dev@example.com',
      GIT_COMMITTER_NAME: 'Dev',
      GIT_COMMITTER_EMAIL: 'dev@example.com'
    },
    maxBuffer: 64 * 1024 * 1024
  }).toString('utf8')
}

/**
 * A checkout (the workspace) with one commit on `main` and `feature`, and the stand-in's bare
 * repository holding the same objects — as GitHub and the runner's checkout would.
 */
export function makeRepository(
  root: string,
  files: Record<string, string | { link: string } | { content: string; exec: true }>
): { workspace: string; bare: string; base: string } {
  const workspace = path.join(root, 'workspace')
  fs.mkdirSync(workspace, { recursive: true })
  gitIn(workspace, ['init', '-q', '-b', 'main'])
  for (const [name, spec] of Object.entries(files)) {
    const file = path.join(workspace, name)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    if (typeof spec === 'string') fs.writeFileSync(file, spec)
    else if ('link' in spec) fs.symlinkSync(spec.link, file)
    else fs.writeFileSync(file, spec.content, { mode: 0o755 })
  }
  gitIn(workspace, ['add', '-A'])
  gitIn(workspace, ['commit', '-q', '-m', 'base'])
  gitIn(workspace, ['branch', 'feature'])
  const base = gitIn(workspace, ['rev-parse', 'HEAD']).trim()
  const bare = path.join(root, 'remote.git')
  gitIn(root, ['clone', '-q', '--bare', workspace, bare])
  return { workspace, bare, base }
}

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}

export interface FolderOptions {
  runId: string
  headSha: string
  patch?: string | Buffer
  outcome?: Outcome
  violations?: Report['policy']['violations']
  imageRef?: string
}

/** A run's output folder as the pipeline writes it (report.json, diff.patch, comment.md). */
export function writeRunFolder(dir: string, o: FolderOptions): Report {
  fs.mkdirSync(dir, { recursive: true })
  const patch = o.patch === undefined ? '' : o.patch
  const diffSha = patch.length === 0 ? null : sha256(patch)
  const phase = {
    command: 'agent',
    exitCode: 0,
    timedOut: false,
    oomKilled: false,
    cancelled: false,
    durationMs: 1200,
    cpuSeconds: 0.5,
    peakMemoryBytes: 10485760,
    logBytes: 10,
    logTruncated: false
  }
  const base = emptyReport(fixturePlan({ runId: o.runId }))
  const report: Report = {
    ...base,
    runId: o.runId,
    outcome: o.outcome ?? 'success',
    outcomeReason:
      o.outcome === 'policy-violation'
        ? 'the agent changed a protected path'
        : 'the agent finished and the tests passed',
    startedAt: '2026-11-29T10:00:00.000Z',
    finishedAt: '2026-11-29T10:01:00.000Z',
    repo: { path: '.', ref: 'HEAD', baseSha: o.headSha, headSha: o.headSha },
    image: {
      ref: o.imageRef ?? `localhost:5000/agent@sha256:${'ab'.repeat(32)}`,
      id: `sha256:${'cd'.repeat(32)}`,
      baseDigests: [],
      dockerfileSha256: null,
      cached: true,
      warnings: []
    },
    task: { sha256: sha256('task'), bytes: 4, source: 'text' },
    agent: { ...phase, promptSha256: sha256('task'), model: null },
    diff: { ...base.diff, sha256: diffSha, bytes: patch.length },
    policy: { ...base.policy, violations: o.violations ?? [] },
    cost: {
      wallMs: 60000,
      cpuSeconds: 1,
      peakMemoryBytes: 10485760,
      tokens: null,
      usd: null,
      usageFile: { status: 'missing' }
    }
  }
  fs.writeFileSync(path.join(dir, 'report.json'), JSON.stringify(report, null, 2) + '\n')
  if (patch.length > 0) fs.writeFileSync(path.join(dir, 'diff.patch'), patch)
  fs.writeFileSync(
    path.join(dir, 'comment.md'),
    renderComment(report, Buffer.isBuffer(patch) ? patch.toString('utf8') : patch)
  )
  // Written last, as the pipeline does: binds every file above.
  fs.writeFileSync(
    path.join(dir, PROVENANCE_FILE),
    JSON.stringify(buildStatement(dir), null, 2) + '\n'
  )
  return report
}

// ---- a whole test world: repository, stand-in, pull request, people ------------------------

export const TOKEN = 'ghs_e2etoken000000000000000000000000000'
export const PEOPLE: Record<string, User> = {
  author: { login: 'pr-author', id: 11, type: 'User' },
  writer: { login: 'writer-wendy', id: 12, type: 'User' },
  maintainer: { login: 'maint-mo', id: 13, type: 'User' },
  reader: { login: 'reader-rita', id: 14, type: 'User' },
  mallory: { login: 'mallory', id: 15, type: 'User' },
  bot: { login: 'helper-bot[bot]', id: 16, type: 'Bot' }
}
export const PR_NUMBER = 7

export interface World {
  root: string
  workspace: string
  base: string
  api: GitHubStandIn
  out: string
  close(): Promise<void>
}

export async function makeWorld(
  files: Parameters<typeof makeRepository>[1] = { 'README.md': 'hello\n' }
): Promise<World> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-e2e-'))
  const { workspace, bare, base } = makeRepository(root, files)
  const api = new GitHubStandIn({ owner: 'octo-org', repo: 'hello', gitDir: bare })
  api.tokens.set(TOKEN, ACTIONS_BOT)
  for (const u of Object.values(PEOPLE)) api.tokens.set(`token-${u.login}`, u)
  api.permissions.set(PEOPLE.author.login, 'write')
  api.permissions.set(PEOPLE.writer.login, 'write')
  api.permissions.set(PEOPLE.maintainer.login, 'maintain')
  api.permissions.set(PEOPLE.reader.login, 'read')
  api.permissions.set(PEOPLE.bot.login, 'write')
  api.pulls.set(PR_NUMBER, {
    number: PR_NUMBER,
    user: PEOPLE.author,
    headRef: 'feature',
    baseRef: 'main',
    headRepo: 'octo-org/hello',
    state: 'open',
    draft: false,
    title: 'Fix the cart',
    body: ''
  })
  // The opener created the pull request's branch (the repository activity names who pushed).
  api.recordPush('feature', '0'.repeat(40), base, PEOPLE.author, 'branch_creation')
  await api.start()
  const out = path.join(workspace, 'airlock-out')
  return {
    root,
    workspace,
    base,
    api,
    out,
    async close() {
      await api.stop()
      fs.rmSync(root, { recursive: true, force: true })
    }
  }
}

/**
 * Saves the world as it is now — the stand-in's state and git refs (see GitHubStandIn.snapshot)
 * and the workspace with the evidence folder — and returns the function that puts it back. For a
 * file whose tests all start from the same prepared world (a run published, say): prepare it once
 * in beforeAll, restore it in beforeEach, and each test starts from that state in any order.
 */
export function saveWorld(world: World): () => void {
  const restoreApi = world.api.snapshot()
  const saved = fs.mkdtempSync(path.join(world.root, 'saved-workspace-'))
  fs.cpSync(world.workspace, saved, { recursive: true, verbatimSymlinks: true })
  return () => {
    restoreApi()
    fs.rmSync(world.workspace, { recursive: true, force: true })
    fs.cpSync(saved, world.workspace, { recursive: true, verbatimSymlinks: true })
  }
}

/** A pull_request (synchronize/opened) payload for the world's pull request at `headSha`. */
export function pullRequestEvent(headSha: string): Record<string, unknown> {
  return webhook('pull_request', 'opened', (p) => {
    p.number = PR_NUMBER
    p.pull_request.number = PR_NUMBER
    p.pull_request.head.sha = headSha
    p.pull_request.head.ref = 'feature'
    // The policy file is read from the base commit: make it one the world's repository has.
    p.pull_request.base.sha = headSha
    p.pull_request.base.ref = 'main'
    p.pull_request.user.login = PEOPLE.author.login
  })
}

export function publish(
  world: World,
  extra: Record<string, string> = {},
  out = world.out
): Promise<ActionRun> {
  return runAction({
    inputs: { mode: 'publish', 'github-token': TOKEN, 'output-dir': out, ...extra },
    eventName: 'pull_request',
    payload: pullRequestEvent(world.api.headSha(world.api.pulls.get(PR_NUMBER) as never)),
    apiUrl: world.api.url,
    workspace: world.workspace
  })
}

/** A one-line change of README.md: the diff the gate tests publish and approve. */
export const README_PATCH =
  'diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-hello\n+hello, world\n'

/** Closes the world, then fails the test on any request the stand-in found invalid. */
export async function closeWorld(world: World): Promise<void> {
  const violations = world.api.violations
  await world.close()
  expect(violations).toEqual([])
}

/** An issue_comment webhook: `user` comments `body` on pull request `pull`. */
export function commentEvent(
  user: User,
  body: string,
  action = 'created',
  pull = PR_NUMBER
): Record<string, unknown> {
  return webhook('issue_comment', 'created', (p) => {
    p.action = action
    p.issue.number = pull
    p.issue.pull_request = { url: `https://api.github.com/repos/octo-org/hello/pulls/${pull}` }
    p.comment.body = body
    p.comment.created_at = new Date().toISOString()
    p.comment.updated_at = p.comment.created_at
    p.comment.user.login = user.login
    p.comment.user.type = user.type
  })
}
