/**
 * The fork flow and the comment trigger, run as GitHub would run the workflow files (loaded with
 * GitHub's parser, expressions evaluated with GitHub's evaluator, real webhook payloads):
 *
 * - examples/fork-publish.yml → .github/workflows/agent-publish.yml on `workflow_run` after a
 *   fork pull request's run: the event lists no pull request, the evidence is another run's
 *   artifact downloaded into $RUNNER_TEMP/untrusted, the pull request is found by head
 *   repository and head commit, and nothing of the pull request is checked out;
 * - examples/comment-run.yml on `issue_comment`: `/airlock run <task>` by a writer runs the agent
 *   (a real container) on the pull request's head with the task as data, then the normal review;
 *   examples/approve.yml approves it; refusals start nothing;
 * - .github/workflows/agent-approve.yml with a GitHub App: the installation token minted by
 *   actions/create-github-app-token (emulated for its inputs and outputs) is the one the action
 *   uses, so the gate comes from the App's identity; without the App's secrets, the workflow token.
 */
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { DefaultArtifactClient } from '@actions/artifact'
import {
  PEOPLE,
  PR_NUMBER,
  README_PATCH as PATCH,
  TOKEN,
  commentEvent,
  gitIn,
  publish,
  webhook,
  writeRunFolder
} from '../../__fixtures__/action-harness.js'
import type { World } from '../../__fixtures__/action-harness.js'
import { ACTIONS_BOT } from '../../__fixtures__/github-stand-in.js'
import type { User } from '../../__fixtures__/github-stand-in.js'
import {
  COMMENT_ID,
  FORK_HEAD,
  FORK_PR,
  FORK_REPO,
  FORK_RUN,
  commandComment,
  finishedRun,
  makeForkWorld
} from '../../__fixtures__/fork.js'
import { runJob, type JobResult, type RunnerSetup } from '../../__fixtures__/workflow-run.js'
import {
  ROOT,
  githubContext,
  jobRuns,
  loadWorkflow,
  resolveCall,
  type Contexts,
  type ReadWorkflow
} from '../../__fixtures__/workflows.js'
import { startResultsService } from '../support/results-service.js'
import type { ResultsService } from '../support/results-service.js'

/** A GitHub App the maintainer set up for the gate (its client id and key are secrets). */
const APP: User = { login: 'airlock-gate[bot]', id: 9001, type: 'Bot' }
const APP_TOKEN = 'ghs_apptoken00000000000000000000000000000'
const KEY = '-----BEGIN RSA PRIVATE KEY-----\nnot-a-real-key\n-----END RSA PRIVATE KEY-----'
const APP_SECRETS = { AIRLOCK_APP_CLIENT_ID: 'Iv1.airlockgate', AIRLOCK_APP_PRIVATE_KEY: KEY }

let world: World
let results: ResultsService

// One results service (and its Azurite) for the file: each test starts from an empty one (reset),
// with a world of its own (repository, stand-in, the fork's pull request).
beforeAll(async () => {
  results = await startResultsService()
}, 60_000)
afterAll(async () => {
  await results?.close()
})

beforeEach(async () => {
  world = await makeForkWorld({
    'README.md': 'hello\n',
    // The repository's own agent image for comment runs: the agent copies its task into the
    // workspace (so the diff shows exactly what it was given); the tests pass.
    '.github/airlock/Dockerfile': `ARG BASE=busybox@sha256:${'0'.repeat(64)}\nFROM \${BASE}\nCOPY agent npm /bin/\n`,
    '.github/airlock/agent': { content: '#!/bin/sh\ncp "$2" TASK.md\n', exec: true },
    '.github/airlock/npm': { content: '#!/bin/sh\nexit 0\n', exec: true }
  })
})
afterEach(async () => {
  const violations = [...world.api.violations, ...results.violations]
  results.reset()
  await world.close()
  expect(violations).toEqual([])
})

const remote = (): string => path.join(world.root, 'remote.git')

function setup(
  eventName: string,
  payload: Record<string, unknown>,
  extra: Partial<RunnerSetup> = {}
): RunnerSetup {
  return {
    remote: remote(),
    root: world.root,
    eventName,
    payload,
    // workflow_run and issue_comment run on the default branch.
    sha: world.base,
    ref: 'refs/heads/main',
    apiUrl: world.api.url,
    token: TOKEN,
    artifactEnv: results.env,
    repositories: { 'octo-org/hello': remote() },
    apps: {
      'Iv1.airlockgate': {
        privateKey: KEY,
        slug: 'airlock-gate',
        token: APP_TOKEN,
        installationId: '55'
      }
    },
    ...extra
  }
}

function log(job: JobResult): string {
  return job.steps
    .map((s) => `${s.stdout}\n${s.stderr}`)
    .join('\n')
    .slice(-6000)
}

/** The job succeeded; when not, its log is the failure message. */
function expectSuccess(job: JobResult): void {
  expect(job.result === 'success' ? 'success' : log(job)).toBe('success')
}

function gate(sha: string): string[] {
  return world.api.statuses
    .filter((s) => s.sha === sha && s.context === 'airlock/approval')
    .map((s) => s.state)
}

/** Uploads a run folder as that run's artifact, as the fork's run job did. */
async function uploadAsRun(dir: string, name: string): Promise<void> {
  const saved = { ...process.env }
  Object.assign(process.env, results.env)
  try {
    const files = fs.readdirSync(dir).map((f) => path.join(dir, f))
    await new DefaultArtifactClient().uploadArtifact(name, files, dir)
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
    Object.assign(process.env, saved)
  }
}

describe('fork pull requests: examples/fork-publish.yml → agent-publish.yml on workflow_run', () => {
  async function publisher(
    event: Record<string, unknown>,
    runId = FORK_RUN,
    secrets: Record<string, string> = {}
  ): Promise<{ job: JobResult; runs: boolean }> {
    const ctx: Contexts = {
      github: githubContext('workflow_run', event, {
        sha: world.base,
        ref: 'refs/heads/main',
        token: TOKEN
      }),
      secrets
    }
    const caller = await loadWorkflow('examples/fork-publish.yml')
    const runs = jobRuns(caller, 'publish', ctx)
    const call = await resolveCall(caller, 'publish', ctx)
    const job = await runJob(
      call.callee,
      'publish',
      { ...ctx, inputs: call.inputs, secrets: call.secrets },
      setup('workflow_run', event, { artifactRuns: { [runId]: results.env } })
    )
    return { job, runs }
  }

  async function forkEvidence(tamper?: (dir: string) => void, runId = FORK_RUN): Promise<string> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-fork-run-'))
    try {
      const report = writeRunFolder(dir, {
        runId: `${runId}-1`,
        headSha: FORK_HEAD,
        patch: PATCH
      })
      tamper?.(dir)
      await uploadAsRun(dir, `airlock-${runId}-1`)
      return report.diff.sha256 as string
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }

  test("the fork's pull request is found by head repository and SHA; review and pending gate; the PR is never checked out", async () => {
    const diff = await forkEvidence()
    const { job, runs } = await publisher(finishedRun(FORK_REPO))
    expect(runs).toBe(true)
    expectSuccess(job)
    // The artifact of the finished run, by its id, into $RUNNER_TEMP/untrusted.
    const download = job.steps.find((s) => s.step.uses?.startsWith('actions/download-artifact@'))!
    expect(download.step.with).toMatchObject({
      name: `airlock-${FORK_RUN}-1`,
      'run-id': FORK_RUN,
      path: `${download.environment.RUNNER_TEMP}/untrusted`
    })
    const action = job.steps.find(
      (s) => s.step.uses === './.airlock/action' && s.step.with.mode !== 'plan'
    )!
    expect(action.inputs).toMatchObject({
      mode: 'publish',
      'output-dir': `${action.environment.RUNNER_TEMP}/untrusted`
    })
    // Nothing of the pull request: the only checkout is Agent Airlock itself, no run step
    // touches the evidence.
    const checkouts = job.steps.filter((s) => s.step.uses?.startsWith('actions/checkout@'))
    expect(checkouts.map((s) => s.step.with.path)).toEqual(['.airlock/action'])
    expect(fs.readdirSync(job.workspace)).toEqual(['.airlock'])
    const reviews = world.api.reviews.filter((r) => r.user.login === ACTIONS_BOT.login)
    expect(reviews).toEqual([
      expect.objectContaining({ pull: FORK_PR, commit_id: FORK_HEAD, state: 'COMMENTED' })
    ])
    expect(reviews[0].body).toContain('hello, world')
    expect(world.api.statuses).toEqual([
      expect.objectContaining({
        sha: FORK_HEAD,
        state: 'pending',
        description: `awaiting approval of diff ${diff.slice(0, 12)}`
      })
    ])
  })

  test('with the GitHub App’s secrets the review and the pending gate are the App’s', async () => {
    world.api.tokens.set(APP_TOKEN, APP)
    await forkEvidence()
    const { job } = await publisher(finishedRun(FORK_REPO), FORK_RUN, APP_SECRETS)
    expectSuccess(job)
    const action = job.steps.find(
      (s) => s.step.uses === './.airlock/action' && s.step.with.mode !== 'plan'
    )!
    expect(action.inputs).toMatchObject({ 'github-token': APP_TOKEN, 'app-slug': 'airlock-gate' })
    expect(world.api.reviews.map((r) => [r.pull, r.user.login])).toEqual([[FORK_PR, APP.login]])
    expect(world.api.statuses.map((s) => [s.state, s.creator.login])).toEqual([
      ['pending', APP.login]
    ])
  })

  test("the README's files on a fork's pull request: no agent ran (no key), so no evidence — the gate is pending with the instruction, never a red mark", async () => {
    const { job, runs } = await publisher(finishedRun(FORK_REPO))
    expect(runs).toBe(true)
    expectSuccess(job)
    const download = job.steps.find((s) => s.step.id === 'download')
    expect(download?.code).toBe(1)
    expect(world.api.statuses.filter((s) => s.sha === FORK_HEAD)).toEqual([
      expect.objectContaining({
        state: 'pending',
        context: 'airlock/approval',
        description:
          'Fork: the agent has not run. A maintainer comments /airlock run on this pull request to run it.'
      })
    ])
    // Nothing else: no review without evidence.
    expect(world.api.reviews).toEqual([])
  })

  test('a tampered artifact (diff.patch changed, report.json naming another head) is refused: the job fails, nothing is written', async () => {
    const tampers: [string, (d: string) => void][] = [
      ['778', (d) => fs.appendFileSync(path.join(d, 'diff.patch'), '+more\n')],
      [
        '779',
        (d) => {
          const f = path.join(d, 'report.json')
          fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replaceAll(FORK_HEAD, 'e1'.repeat(20)))
        }
      ]
    ]
    for (const [runId, tamper] of tampers) {
      await forkEvidence(tamper, runId)
      const { job } = await publisher(finishedRun(FORK_REPO, { runId }), runId)
      expect([runId, job.result]).toEqual([runId, 'failure'])
      expect(log(job)).toMatch(/invalid run evidence/)
    }
    expect(world.api.writes()).toEqual([])
  })

  test('a run of a same-repository pull request is not this publisher’s', async () => {
    const ctx: Contexts = {
      github: githubContext('workflow_run', finishedRun('octo-org/hello'), {
        sha: world.base,
        ref: 'refs/heads/main',
        token: TOKEN
      })
    }
    expect(jobRuns(await loadWorkflow('examples/fork-publish.yml'), 'publish', ctx)).toBe(false)
  })
})

describe('comment trigger: examples/comment-run.yml', () => {
  const comment = (user: User, body: string, action = 'created'): Record<string, unknown> =>
    commandComment(user, body, action)

  /**
   * examples/comment-run.yml as written, except that the agent is the repository's own image (its
   * Dockerfile and command) instead of the preset: this tier builds no preset image.
   */
  const read: ReadWorkflow = (f) => {
    const text = fs.readFileSync(path.join(ROOT, f), 'utf8')
    return f === 'examples/comment-run.yml'
      ? text
          .replace(
            '      agent: claude-code\n',
            '      dockerfile: .github/airlock/Dockerfile\n      agent-command: agent --task /airlock/task.md\n'
          )
          // The budget applies to the preset's model route, which this agent has none of.
          .replace(/^ {6}max-model-(requests|tokens): .*\n/gm, '')
      : text
  }

  /** The command job, then the called workflow's run and publish jobs, as GitHub runs them. */
  async function commentRun(event: Record<string, unknown>) {
    const runId = String(100000 + Math.floor(Math.random() * 899999))
    const ctx: Contexts = {
      github: githubContext('issue_comment', event, {
        sha: world.base,
        ref: 'refs/heads/main',
        token: TOKEN,
        runId
      }),
      secrets: { ANTHROPIC_API_KEY: 'sk-canary-comment-run' }
    }
    const w = await loadWorkflow('examples/comment-run.yml', read)
    const busybox = execFileSync('docker', [
      'image',
      'inspect',
      '-f',
      '{{.Id}}',
      'airlock-local/busybox:1'
    ])
      .toString()
      .trim()
    const s = setup('issue_comment', event, {
      // A hosted runner pulls the pinned base; here it is the local image.
      machineInputs: (step): Record<string, string> =>
        step.with.mode === 'run' && (step.with['build-args'] ?? '') === ''
          ? { 'build-args': `BASE=${busybox}`, memory: '256m', cpus: '1' }
          : {}
    })
    const command = await runJob(w, 'command', ctx, s)
    const needs: Record<string, unknown> = {
      command: { result: command.result, outputs: command.outputs }
    }
    const skipped = {
      ran: false,
      result: 'skipped',
      outputs: {},
      steps: []
    } as unknown as JobResult
    if (!jobRuns(w, 'airlock', { ...ctx, needs }))
      return { command, run: skipped, publish: skipped, runId }
    const call = await resolveCall(w, 'airlock', { ...ctx, needs }, read)
    const inner: Contexts = { ...ctx, inputs: call.inputs, secrets: call.secrets }
    const run = await runJob(call.callee, 'run', inner, s)
    const pub = await runJob(
      call.callee,
      'publish',
      { ...inner, needs: { run: { result: run.result, outputs: run.outputs } } },
      s
    )
    return { command, run, publish: pub, runId }
  }

  test('a writer’s /airlock run <task> runs the agent on the head with the task as data; reaction, review, then approve.yml approves', async () => {
    const head = world.api.push('feature', 'the pull request’s work')
    const marker = path.join(os.tmpdir(), `airlock-pwned-${process.pid}`)
    const task = `fix it; $(touch ${marker}) \`touch ${marker}\` "q" 'q' \${{ github.token }} \${HOME}\nsecond line`
    const {
      command,
      run,
      publish: pub,
      runId
    } = await commentRun(comment(PEOPLE.writer, `/airlock run ${task}`))
    expectSuccess(command)
    expect(command.outputs).toMatchObject({
      'run-requested': 'true',
      task,
      'head-sha': head,
      'pull-request': String(PR_NUMBER)
    })
    expect(world.api.reactions).toEqual([
      { commentId: COMMENT_ID, content: 'rocket', user: ACTIONS_BOT.login }
    ])
    expectSuccess(run)
    const action = run.steps.find((s) => s.step.id === 'airlock')!
    expect(action.inputs.task).toBe(task)
    // The head was checked out, and the task reached the agent byte for byte, never a shell.
    expect(gitIn(run.workspace, ['rev-parse', 'HEAD']).trim()).toBe(head)
    expect(fs.existsSync(marker)).toBe(false)
    expectSuccess(pub)
    const reviews = world.api.reviews.filter((r) => r.user.login === ACTIONS_BOT.login)
    expect(reviews.map((r) => [r.pull, r.commit_id])).toEqual([[PR_NUMBER, head]])
    const body = reviews[0].body
    expect(body).toContain('TASK.md')
    expect(body).toContain('${{ github.token }}')
    expect(body).not.toContain(TOKEN)
    expect(gate(head)).toEqual(['pending'])

    // The normal approval, from examples/approve.yml on the default branch.
    const diff = /"diffSha256":"([0-9a-f]{64})"/.exec(body)![1]
    const approval = commentEvent(PEOPLE.maintainer, `/airlock approve ${diff.slice(0, 12)}`)
    const ctx: Contexts = {
      github: githubContext('issue_comment', approval, {
        sha: world.base,
        ref: 'refs/heads/main',
        token: TOKEN
      })
    }
    const call = await resolveCall(await loadWorkflow('examples/approve.yml'), 'approve', ctx)
    const job = await runJob(
      call.callee,
      'approve',
      { ...ctx, inputs: call.inputs, secrets: call.secrets },
      // The approval job downloads the evidence of the comment run (its artifact) by run id.
      setup('issue_comment', approval, { artifactRuns: { [runId]: results.env } })
    )
    expectSuccess(job)
    expect(
      job.steps.find((s) => s.step.uses?.startsWith('actions/download-artifact@'))?.step.with
    ).toMatchObject({ name: `airlock-${runId}-1`, 'run-id': runId })
    expect(gate(head)).toEqual(['pending', 'success'])
  }, 300_000)

  test('refused with the reason, nothing runs: a reader, a bot, an edited comment, a closed pull request', async () => {
    const cases: [User, string, RegExp][] = [
      [PEOPLE.reader, 'created', /has read permission/],
      [PEOPLE.bot, 'created', /is a bot/],
      [PEOPLE.writer, 'edited', /edited comment is not a command/],
      [PEOPLE.writer, 'closed', /is not open/]
    ]
    for (const [user, action, reason] of cases) {
      if (action === 'closed')
        (world.api.pulls.get(PR_NUMBER) as { state: string }).state = 'closed'
      const event = comment(user, '/airlock run do it', action === 'closed' ? 'created' : action)
      const before = { reactions: world.api.reactions.length, comments: world.api.comments.length }
      const { command, run, publish: pub } = await commentRun(event)
      expect([command.ran, command.result]).toEqual([true, 'success'])
      expect(command.outputs['run-requested']).toBe('false')
      expect([run.ran, pub.ran]).toEqual([false, false])
      expect(world.api.reactions.slice(before.reactions).map((r) => r.content)).toEqual([
        'confused'
      ])
      // The stand-in also holds the command itself (the event's comment is delivered first).
      const replies = world.api.comments
        .slice(before.comments)
        .filter((c) => c.user.type === 'Bot' && c.body.startsWith('Agent Airlock'))
      expect(replies).toHaveLength(1)
      expect(replies[0].body).toMatch(reason)
    }
    expect(world.api.reviews).toEqual([])
    expect(world.api.statuses).toEqual([])
  }, 300_000)
})

describe('agent-approve.yml with a GitHub App identity', () => {
  async function approveJob(secrets: Record<string, string>, diff: string): Promise<JobResult> {
    const event = commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    const ctx: Contexts = {
      github: githubContext('issue_comment', event, {
        sha: world.base,
        ref: 'refs/heads/main',
        token: TOKEN
      }),
      secrets
    }
    const call = await resolveCall(await loadWorkflow('examples/approve.yml'), 'approve', ctx)
    // The evidence of run 100 (published below) is that run's artifact.
    await uploadAsRun(world.out, 'airlock-100-1')
    return runJob(
      call.callee,
      'approve',
      { ...ctx, inputs: call.inputs, secrets: call.secrets },
      setup('issue_comment', event, { artifactRuns: { '100': results.env } })
    )
  }

  test('with the App’s client id and key: the installation token and app-slug reach the action; the gate is the App’s', async () => {
    world.api.tokens.set(APP_TOKEN, APP)
    const report = writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch: PATCH })
    expect(
      (await publish(world, { 'github-token': APP_TOKEN, 'app-slug': 'airlock-gate' })).code
    ).toBe(0)
    const job = await approveJob(APP_SECRETS, report.diff.sha256 as string)
    expectSuccess(job)
    const mint = job.steps.find((s) => s.step.uses?.startsWith('actions/create-github-app-token@'))!
    expect(mint.skipped).toBe(false)
    expect(mint.step.with).toMatchObject({
      'client-id': 'Iv1.airlockgate',
      'permission-statuses': 'write',
      'permission-pull-requests': 'write'
    })
    const action = job.steps.find(
      (s) => s.step.uses === './.airlock/action' && s.step.with.mode !== 'plan'
    )!
    expect(action.inputs).toMatchObject({ 'github-token': APP_TOKEN, 'app-slug': 'airlock-gate' })
    // The key went only to the step that mints the token.
    for (const s of job.steps.filter((x) => x !== mint)) {
      const seen = Object.entries({ ...s.environment, ...s.inputs }).filter(([, v]) =>
        v.includes('not-a-real-key')
      )
      expect([s.step.index, seen]).toEqual([s.step.index, []])
    }
    expect(world.api.statuses.map((s) => [s.state, s.creator.login])).toEqual([
      ['pending', APP.login],
      ['success', APP.login]
    ])
  })

  test('without the App’s secrets: no token is minted, the workflow token is used', async () => {
    const report = writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch: PATCH })
    expect((await publish(world)).code).toBe(0)
    const job = await approveJob({}, report.diff.sha256 as string)
    expectSuccess(job)
    const mint = job.steps.find((s) => s.step.uses?.startsWith('actions/create-github-app-token@'))!
    expect(mint.skipped).toBe(true)
    const action = job.steps.find(
      (s) => s.step.uses === './.airlock/action' && s.step.with.mode !== 'plan'
    )!
    expect(action.inputs).toMatchObject({ 'github-token': TOKEN, 'app-slug': '' })
    expect(gate(world.base)).toEqual(['pending', 'success'])
  })
})

describe('approval as shipped: examples/approve.yml and examples/review-relay.yml with every action.yml default', () => {
  /** The run's evidence (run 100, attempt 1) published for PR_NUMBER and uploaded as its artifact. */
  async function publishedRun(tamper?: (dir: string) => void): Promise<string> {
    const report = writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch: PATCH })
    expect((await publish(world)).code).toBe(0)
    tamper?.(world.out)
    await uploadAsRun(world.out, 'airlock-100-1')
    return report.diff.sha256 as string
  }

  async function approveFor(event: Record<string, unknown>, eventName: string): Promise<JobResult> {
    const ctx: Contexts = {
      github: githubContext(eventName, event, {
        sha: world.base,
        ref: 'refs/heads/main',
        token: TOKEN
      })
    }
    const caller = await loadWorkflow('examples/approve.yml')
    expect(jobRuns(caller, 'approve', ctx)).toBe(true)
    const call = await resolveCall(caller, 'approve', ctx)
    return runJob(
      call.callee,
      'approve',
      { ...ctx, inputs: call.inputs, secrets: call.secrets },
      setup(eventName, event, { artifactRuns: { '100': results.env } })
    )
  }

  test('a writer’s `/airlock approve <prefix>` on the current head and diff turns the gate green', async () => {
    const diff = await publishedRun()
    const job = await approveFor(
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`),
      'issue_comment'
    )
    expectSuccess(job)
    // The runner handed the action every default of action.yml, output-dir included.
    const action = job.steps.find((s) => s.step.with.mode === 'approve')!
    expect(action.inputs).toMatchObject({
      mode: 'approve',
      'output-dir': `${action.environment.RUNNER_TEMP}/evidence`,
      'fail-outcomes': 'policy-violation'
    })
    // The evidence of the latest report was located and downloaded for it.
    const download = job.steps.find((s) => s.step.uses?.startsWith('actions/download-artifact@'))!
    expect([download.skipped, download.step.with]).toEqual([
      false,
      expect.objectContaining({ name: 'airlock-100-1', 'run-id': '100' })
    ])
    expect(gate(world.base)).toEqual(['pending', 'success'])
  })

  test('the downloaded evidence is checked against its provenance.json: a changed byte refuses the approval', async () => {
    const diff = await publishedRun((dir) => fs.appendFileSync(path.join(dir, 'comment.md'), ' '))
    const job = await approveFor(
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`),
      'issue_comment'
    )
    expect(job.result).toBe('failure')
    expect(log(job)).toMatch(/the evidence does not match its provenance.json: comment.md/)
    expect(gate(world.base)).toEqual(['pending'])
  })

  test('evidence: false decides on the review and status alone (nothing downloaded)', async () => {
    const diff = await publishedRun()
    const event = commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    const ctx: Contexts = {
      github: githubContext('issue_comment', event, {
        sha: world.base,
        ref: 'refs/heads/main',
        token: TOKEN
      })
    }
    const read = (f: string): string => {
      const text = fs.readFileSync(path.join(ROOT, f), 'utf8')
      return f === 'examples/approve.yml'
        ? text.replace(
            '    secrets:\n      AIRLOCK_APP_CLIENT_ID',
            '    with:\n      evidence: false\n    secrets:\n      AIRLOCK_APP_CLIENT_ID'
          )
        : text
    }
    const call = await resolveCall(
      await loadWorkflow('examples/approve.yml', read),
      'approve',
      ctx,
      read
    )
    const job = await runJob(
      call.callee,
      'approve',
      { ...ctx, inputs: call.inputs, secrets: call.secrets },
      setup('issue_comment', event)
    )
    expectSuccess(job)
    const download = job.steps.find((s) => s.step.uses?.startsWith('actions/download-artifact@'))!
    expect(download.skipped).toBe(true)
    expect(gate(world.base)).toEqual(['pending', 'success'])
  })

  test('a writer’s approving review → the relay finishes → approve.yml on workflow_run turns the gate green', async () => {
    await publishedRun()
    // The review, as GitHub stores it (the approval workflow reads it from the API).
    const reviewId = 100_000 + world.api.reviews.length
    world.api.reviews.push({
      id: reviewId,
      pull: PR_NUMBER,
      user: PEOPLE.writer,
      body: '',
      state: 'APPROVED',
      commit_id: world.base,
      submitted_at: new Date().toISOString()
    })
    // The relay: a pull_request_review run that only finishes.
    const review = webhook('pull_request_review', 'submitted', (p) => {
      p.pull_request.number = PR_NUMBER
      p.pull_request.head.sha = world.base
      p.review.id = reviewId
      p.review.state = 'approved'
      p.review.commit_id = world.base
      p.review.user.login = PEOPLE.writer.login
    })
    const relay = await loadWorkflow('examples/review-relay.yml')
    const relayCtx: Contexts = {
      github: githubContext('pull_request_review', review, {
        sha: world.base,
        ref: `refs/pull/${PR_NUMBER}/merge`,
        token: TOKEN
      })
    }
    const relayed = await runJob(
      relay,
      'relay',
      relayCtx,
      setup('pull_request_review', review, { ref: `refs/pull/${PR_NUMBER}/merge` })
    )
    expectSuccess(relayed)
    // Its completion: workflow_run on the default branch's approve.yml.
    const finished = webhook('workflow_run', 'completed', (p) => {
      p.workflow_run.id = 5150
      p.workflow_run.run_attempt = 1
      p.workflow_run.name = relay.template.name ?? 'Agent Airlock review relay'
      p.workflow_run.event = 'pull_request_review'
      p.workflow_run.conclusion = 'success'
      p.workflow_run.head_sha = world.base
      p.workflow_run.head_repository.full_name = 'octo-org/hello'
      p.workflow_run.pull_requests = [{ number: PR_NUMBER }]
    })
    const job = await approveFor(finished, 'workflow_run')
    expectSuccess(job)
    expect(gate(world.base)).toEqual(['pending', 'success'])
  })
})
