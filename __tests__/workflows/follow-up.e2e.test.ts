/**
 * A conversation with the agent on a fork's pull request, run as GitHub would run the files:
 * examples/comment-run.yml on `issue_comment` (the default branch's file), its command job, then
 * .github/workflows/agent-run.yml's run and publish jobs, with `agent: claude-code` — the real
 * Claude Code in the preset's image, through the egress proxy to the scripted stub of the
 * Messages API (fixtures/egress/stub-server.mjs with STUB_SCRIPT=conversation).
 *
 * A writer's `/airlock run fix the failing test` runs on the fork's head: the agent fixes
 * greet.mjs, answers, and leaves a finding on it; the writer replies on that finding. A follow-up
 * `/airlock run also update the changelog` continues from the first run: the command job finds
 * the action's own review and its run, the run job downloads that run's artifact, the action
 * verifies it and applies its patch before the agent starts — the new diff holds both changes,
 * the task quotes the first answer and the reply — and the new review supersedes the first and
 * links to it.
 *
 * What this machine lacks and a hosted runner has (a registry and the internet) is given to the
 * action step only, where the workflow leaves the input empty: the local node base, the local
 * proxy image, and the model API's address (the preset's route pointed at the stub, its CA).
 */
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { randomBytes } from 'node:crypto'
import Docker from 'dockerode'
import { PEOPLE, TOKEN, commentEvent, gitIn, makeWorld } from '../../__fixtures__/action-harness.js'
import type { World } from '../../__fixtures__/action-harness.js'
import { ACTIONS_BOT, reviewCommentId } from '../../__fixtures__/github-stand-in.js'
import type { User } from '../../__fixtures__/github-stand-in.js'
import { runJob, type JobResult, type RunnerSetup } from '../../__fixtures__/workflow-run.js'
import {
  githubContext,
  jobRuns,
  loadWorkflow,
  resolveCall,
  type Contexts
} from '../../__fixtures__/workflows.js'
import { startResultsService } from '../support/results-service.js'
import type { ResultsService } from '../support/results-service.js'
import { imageId, makeCerts, startStubs, type StubNet } from '../egress/helpers.js'

const docker = new Docker()
const SECRET = `sk-ant-canary-${randomBytes(12).toString('hex')}`
const FORK_PR = 31
const FORK_REPO = 'mallory/hello'
let tmp: string
let stubs: StubNet
let ca: string
let results: ResultsService
let world: World
let forkHead: string

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-follow-up-e2e-'))
  fs.chmodSync(tmp, 0o755)
  makeCerts(path.join(tmp, 'certs'))
  ca = fs.readFileSync(path.join(tmp, 'certs', 'ca.crt'), 'utf8')
  // The stub model plays the conversation (STUB_SCRIPT=conversation).
  stubs = await startStubs(docker, path.join(tmp, 'certs'), { script: 'conversation' })
  results = await startResultsService()
}, 300_000)
afterAll(async () => {
  await results?.close()
  await stubs?.remove()
  fs.rmSync(tmp, { recursive: true, force: true })
}, 60_000)

const remote = (): string => path.join(world.root, 'remote.git')

beforeEach(async () => {
  world = await makeWorld({
    'README.md': '# hello\n',
    'package.json': '{ "name": "hello", "private": true, "scripts": { "test": "node --test" } }\n'
  })
  // The fork's contribution: greet() and its test, which fails (no comma). GitHub keeps the
  // fork's head in this repository under refs/pull/<n>/head; no branch of it is here.
  const ws = world.workspace
  gitIn(ws, ['checkout', '-q', '-b', 'fork-patch', 'main'])
  fs.writeFileSync(path.join(ws, 'greet.mjs'), "export const greet = (name) => 'Hello ' + name\n")
  fs.writeFileSync(
    path.join(ws, 'greet.test.mjs'),
    "import test from 'node:test'\nimport assert from 'node:assert'\nimport { greet } from './greet.mjs'\n\ntest('greets', () => assert.strictEqual(greet('world'), 'Hello, world'))\n"
  )
  gitIn(ws, ['add', '.'])
  gitIn(ws, ['commit', '-q', '-m', 'greet (from the fork)'])
  forkHead = gitIn(ws, ['rev-parse', 'HEAD']).trim()
  gitIn(ws, ['push', '-q', remote(), `${forkHead}:refs/pull/${FORK_PR}/head`])
  gitIn(ws, ['checkout', '-q', 'main'])
  world.api.pulls.set(FORK_PR, {
    number: FORK_PR,
    user: PEOPLE.mallory,
    headRef: 'patch-1',
    baseRef: 'main',
    headRepo: FORK_REPO,
    state: 'open',
    draft: false,
    title: 'Greet people',
    body: '',
    foreignHeadSha: forkHead
  })
})
afterEach(async () => {
  const violations = [...world.api.violations, ...results.violations]
  results.reset()
  await world.close()
  expect(violations).toEqual([])
})

function log(job: JobResult): string {
  return job.steps
    .map((s) => `${s.stdout}\n${s.stderr}`)
    .join('\n')
    .slice(-8000)
}

function expectSuccess(job: JobResult): void {
  expect(job.result === 'success' ? 'success' : log(job)).toBe('success')
}

/** The runner of one workflow run; what this machine lacks is given to the action step only. */
function runnerSetup(event: Record<string, unknown>, artifactRuns: string[]): RunnerSetup {
  return {
    remote: remote(),
    root: world.root,
    eventName: 'issue_comment',
    payload: event,
    sha: world.base,
    ref: 'refs/heads/main',
    apiUrl: world.api.url,
    token: TOKEN,
    artifactEnv: results.env,
    // The earlier runs' artifacts, by run id (the one results service holds them all).
    artifactRuns: Object.fromEntries(artifactRuns.map((id) => [id, results.env])),
    machineInputs: (step) =>
      step.with.mode !== 'run' && step.with.mode !== 'plan'
        ? {}
        : Object.fromEntries(
            Object.entries({
              'build-args': `BASE=${imageId('airlock-local/node:24-npm')}`,
              credentials:
                'ANTHROPIC=https://api.test:8443|AIRLOCK_AGENT_API_KEY|x-api-key|allow=POST /v1/messages',
              'host-map': `api.test=${stubs.upstream.ip}`,
              'upstream-ca': ca,
              'proxy-image': imageId('airlock-local/node:18'),
              'proxy-network': stubs.network
            }).filter(([k]) => (step.with[k] ?? '') === '')
          )
  }
}

/** examples/comment-run.yml for `user`'s comment `body` on the fork's pull request. */
async function commentRun(user: User, body: string, earlierRuns: string[] = []) {
  const event = commentEvent(user, body, 'created', FORK_PR)
  const runId = String(100000 + Math.floor(Math.random() * 899999))
  const ctx: Contexts = {
    github: githubContext('issue_comment', event, {
      sha: world.base,
      ref: 'refs/heads/main',
      token: TOKEN,
      runId
    }),
    secrets: { ANTHROPIC_API_KEY: SECRET }
  }
  const w = await loadWorkflow('examples/comment-run.yml')
  const s = runnerSetup(event, earlierRuns)
  const command = await runJob(w, 'command', ctx, s)
  expectSuccess(command)
  const needs = { command: { result: command.result, outputs: command.outputs } }
  expect(jobRuns(w, 'airlock', { ...ctx, needs })).toBe(true)
  const call = await resolveCall(w, 'airlock', { ...ctx, needs })
  const inner: Contexts = { ...ctx, inputs: call.inputs, secrets: call.secrets }
  const run = await runJob(call.callee, 'run', inner, s)
  const publish = await runJob(
    call.callee,
    'publish',
    { ...inner, needs: { run: { result: run.result, outputs: run.outputs } } },
    s
  )
  const out = path.join(run.workspace, 'airlock-out')
  const read = (f: string): string => fs.readFileSync(path.join(out, f), 'utf8')
  return { command, run, publish, runId, read }
}

const ownReviews = () =>
  world.api.reviews.filter((r) => r.pull === FORK_PR && r.user.login === ACTIONS_BOT.login)

test('on a fork’s pull request, /airlock run fix the failing test, then /airlock run also update the changelog continues from the first patch: both changes in the diff, the first answer and the review reply in the task, the first review superseded', async () => {
  // 1. The first command: the agent works on the fork's head inside the sandbox.
  const first = await commentRun(PEOPLE.writer, '/airlock run fix the failing test')
  expect(first.command.outputs).toMatchObject({
    'run-requested': 'true',
    'head-sha': forkHead,
    'continue-run-id': ''
  })
  expectSuccess(first.run)
  expectSuccess(first.publish)
  expect(gitIn(first.run.workspace, ['rev-parse', 'HEAD']).trim()).toBe(forkHead)
  expect(first.read('diff.patch')).toContain("+export const greet = (name) => 'Hello, ' + name")
  expect(first.read('task.md')).toBe('fix the failing test')
  const firstReport = JSON.parse(first.read('report.json')) as {
    runId: string
    agent: { message?: { text: string } }
    continuation?: unknown
  }
  expect(firstReport.agent.message?.text).toContain('Fixed greet.mjs')
  expect(firstReport.continuation).toBeUndefined()
  const [review1] = ownReviews()
  expect(review1.commit_id).toBe(forkHead)
  expect(review1.comments?.map((c) => [c.path, c.line])).toEqual([['greet.mjs', 1]])

  // 2. The writer answers the finding in its thread.
  world.api.reviewReplies.push({
    id: 880001,
    pull: FORK_PR,
    inReplyTo: reviewCommentId(review1.id, 0),
    user: PEOPLE.writer,
    body: 'Agreed: note it in CHANGELOG.md <b>please</b> @octocat \u202eevil',
    created_at: new Date(Date.now() + 1000).toISOString()
  })

  // 3. The follow-up: it continues the first run (the action's own review names it).
  const second = await commentRun(PEOPLE.writer, '/airlock run also update the changelog', [
    first.runId
  ])
  expect(second.command.outputs).toMatchObject({
    'run-requested': 'true',
    'head-sha': forkHead,
    'continue-run-id': first.runId,
    'continue-artifact': `airlock-${first.runId}-1`
  })
  expect(world.api.comments.at(-1)?.body).toContain(`it continues run \`${first.runId}-1\``)
  expectSuccess(second.run)
  const download = second.run.steps.find(
    (s) => s.step.uses?.startsWith('actions/download-artifact@') && !s.skipped
  )!
  expect(download.step.with).toMatchObject({
    name: `airlock-${first.runId}-1`,
    'run-id': first.runId,
    path: `${download.environment.RUNNER_TEMP}/airlock-earlier`
  })
  const action = second.run.steps.find((s) => s.step.id === 'airlock')!
  expect(action.inputs['continue-from']).toBe(`${action.environment.RUNNER_TEMP}/airlock-earlier`)

  // Its diff is against the head and holds both changes.
  const diff = second.read('diff.patch')
  expect(diff).toContain("+export const greet = (name) => 'Hello, ' + name")
  expect(diff).toContain('+- greet() puts a comma after Hello')
  // Its task: the new instructions first, then the earlier task and answer and the reply, quoted.
  const task = second.read('task.md')
  expect(task.split('\n')[0]).toBe('also update the changelog')
  expect(task).toContain('```text\nfix the failing test\n```')
  expect(task).toContain(
    '```text\nFixed greet.mjs: the greeting lacked the comma greet.test.mjs expects.\n```'
  )
  expect(task).toContain(
    `Comment by ${PEOPLE.writer.login} (GitHub's author_association: COLLABORATOR; not a permission) on greet.mjs:1:`
  )
  expect(task).toContain('⟨U+202E⟩evil')
  expect(task).not.toContain('\u202e')
  const report = JSON.parse(second.read('report.json')) as {
    outcome: string
    continuation?: Record<string, unknown>
  }
  expect(report.continuation).toMatchObject({
    runId: `${first.runId}-1`,
    headSha: forkHead,
    carried: true,
    comments: 1
  })

  // The new review supersedes the first one and links to it; the gate waits for this diff.
  expectSuccess(second.publish)
  const [old, latest] = ownReviews()
  expect(old.id).toBe(review1.id)
  expect(old.body).toContain('<!-- airlock:superseded -->')
  expect(latest.body).toContain(
    `**Continues:** [run <code>${first.runId}-1</code>](https://github.com/octo-org/hello/pull/${FORK_PR}#pullrequestreview-${review1.id})`
  )
  expect(latest.body).toContain('this review supersedes the earlier one')
  expect(
    world.api.statuses.filter((s) => s.sha === forkHead && s.context === 'airlock/approval').at(-1)
      ?.state
  ).toBe('pending')
  // The key reached only the proxy's upstream, never the sandbox's files or the evidence.
  expect(diff).not.toContain(SECRET)
  expect(task).not.toContain(SECRET)
}, 900_000)

test('a follow-up whose earlier artifact was tampered with is refused with the reason: nothing runs, nothing is published', async () => {
  const first = await commentRun(PEOPLE.writer, '/airlock run fix the failing test')
  expectSuccess(first.publish)
  // The earlier run's artifact replaced by one whose diff.patch writes into .git (its
  // provenance.json left as it was): the download gets it, the action refuses it.
  const evil = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-evil-earlier-'))
  try {
    const good = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-good-earlier-'))
    const { DefaultArtifactClient } = await import('@actions/artifact')
    const saved = { ...process.env }
    Object.assign(process.env, results.env)
    try {
      const client = new DefaultArtifactClient()
      const { artifact } = await client.getArtifact(`airlock-${first.runId}-1`)
      await client.downloadArtifact(artifact.id, { path: good })
      fs.cpSync(good, evil, { recursive: true })
      fs.appendFileSync(
        path.join(evil, 'diff.patch'),
        'diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+touch /tmp/pwned\n'
      )
      results.reset()
      const files = (fs.readdirSync(evil, { recursive: true }) as string[])
        .map((f) => path.join(evil, f))
        .filter((f) => fs.lstatSync(f).isFile())
      await client.uploadArtifact(`airlock-${first.runId}-1`, files, evil)
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
      Object.assign(process.env, saved)
      fs.rmSync(good, { recursive: true, force: true })
    }
  } finally {
    fs.rmSync(evil, { recursive: true, force: true })
  }
  const reviewsBefore = ownReviews().length
  const second = await commentRun(PEOPLE.writer, '/airlock run also update the changelog', [
    first.runId
  ])
  expect(second.command.outputs['continue-run-id']).toBe(first.runId)
  expect(second.run.result).toBe('failure')
  expect(log(second.run)).toMatch(
    /cannot continue the earlier run: the evidence does not match its provenance\.json: diff\.patch: changed/
  )
  expect(second.publish.ran).toBe(false)
  expect(ownReviews().length).toBe(reviewsBefore)
}, 900_000)
