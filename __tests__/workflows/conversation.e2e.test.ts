/**
 * The conversation on a pull request, through the workflow files as GitHub runs them, with the
 * claude-code preset against its stub model (the real CLI in the preset's image, through the
 * egress proxy): a writer's `/airlock run …` on a fork's pull request (examples/comment-run.yml),
 * refusals, a push between the command and the run, and approvals that mean more
 * (examples/approve.yml with a protected change and with `required-approvals: 2`).
 */
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { PEOPLE, gitIn } from '../../__fixtures__/action-harness.js'
import type { World } from '../../__fixtures__/action-harness.js'
import { ACTIONS_BOT } from '../../__fixtures__/github-stand-in.js'
import {
  SECRET,
  addForkPullRequest,
  approveRun,
  commentOn,
  commentRun,
  forkPush,
  gate,
  jobLog,
  makePullRequestWorld,
  pullRequestRun,
  startModelStage,
  stopModelStage,
  type ModelStage,
  type PullRefs
} from '../../__fixtures__/preset-run.js'
import type { JobResult } from '../../__fixtures__/workflow-run.js'
import { imageId } from '../egress/helpers.js'
import { ROOT, type ReadWorkflow } from '../../__fixtures__/workflows.js'

const FORK_PR = 21
/** Where the fork's test would leave a mark if it ever ran on the runner instead of the sandbox. */
const MARK = path.join(os.tmpdir(), `airlock-fork-ran-${process.pid}`)

/** The fork's change: a test that says where it ran, and tries to leave a mark on the runner. */
const FORK_FILES = {
  'package.json': JSON.stringify({ name: 'hello', scripts: { test: 'node test.js' } }) + '\n',
  'test.js': `require('fs').writeFileSync(${JSON.stringify(MARK)}, 'ran')\nconsole.log('the fork test ran')\n`
}

let stage: ModelStage
let world: World
let refs: PullRefs

beforeAll(async () => {
  stage = await startModelStage()
}, 300_000)
afterAll(async () => {
  await stopModelStage(stage)
}, 60_000)
afterEach(async () => {
  const violations = [...world.api.violations, ...stage.results.violations]
  stage.results.reset()
  await world.close()
  fs.rmSync(MARK, { force: true })
  expect(violations).toEqual([])
})

/** The repository, its same-repository pull request, and `policy` as the base's policy file. */
async function setUp(policy?: string): Promise<void> {
  ;({ world, refs } = await makePullRequestWorld({
    'README.md': '# hello\n',
    '.github/airlock/review-task.md': 'Write a file GREETING.md that greets the reader.\n',
    ...(policy !== undefined ? { '.github/airlock.yml': policy } : {})
  }))
}

function expectSuccess(job: JobResult | undefined): void {
  expect(job === undefined ? 'not run' : job.result === 'success' ? 'success' : jobLog(job)).toBe(
    'success'
  )
}

function report(job: JobResult): {
  outcome: string
  repo: { headSha: string }
  diff: { sha256: string; files: { path: string }[] }
} {
  return JSON.parse(fs.readFileSync(path.join(job.workspace, 'airlock-out', 'report.json'), 'utf8'))
}

function repliesTo(pull: number): string[] {
  return world.api.comments
    .filter((c) => c.issue === pull && c.user.login === ACTIONS_BOT.login)
    .map((c) => c.body)
}

describe("/airlock run on a fork's pull request (examples/comment-run.yml)", () => {
  test("a writer's `/airlock run fix the failing test` → the agent works on the fork's head inside the sandbox; one review, the gate pending", async () => {
    await setUp()
    const forkHead = addForkPullRequest(world, FORK_PR, FORK_FILES)
    const before = (await stage.stubs.seen('upstream')).auth.length
    const { command, run, publish } = await commentRun(
      stage,
      world,
      commentOn(PEOPLE.writer, '/airlock run fix the failing test', FORK_PR)
    )
    expectSuccess(command)
    expect(command.outputs).toMatchObject({
      'run-requested': 'true',
      task: 'fix the failing test',
      'head-sha': forkHead,
      'pull-request': String(FORK_PR)
    })
    expect(repliesTo(FORK_PR).join('\n')).toContain(`of the fork ${'mallory/hello'}`)
    expectSuccess(run)
    expectSuccess(publish)

    // The fork's head, with the preset; the key only on the action step, which hands it to the proxy.
    const action = run!.steps.find((s) => s.step.id === 'airlock')!
    expect(action.inputs).toMatchObject({ ref: forkHead, agent: 'claude-code', env: '' })
    expect(action.environment.AIRLOCK_AGENT_API_KEY).toBe(SECRET)
    for (const s of run!.steps.filter((x) => x !== action)) {
      const seen = Object.entries({ ...s.environment, ...s.inputs }).filter(([, v]) =>
        v.includes(SECRET)
      )
      expect([s.step.index, seen]).toEqual([s.step.index, []])
    }
    expect((await stage.stubs.seen('upstream')).auth.slice(before)).toContain(
      `x-api-key: ${SECRET}`
    )
    const r = report(run!)
    expect(r.repo.headSha).toBe(forkHead)
    expect(r.diff.files.map((f) => f.path)).toContain('GREETING.md')
    // The fork's test ran in the sandbox (its log), never on the runner (no mark here).
    expect(
      fs.readFileSync(path.join(run!.workspace, 'airlock-out', 'logs', 'tests.log'), 'utf8')
    ).toContain('the fork test ran')
    expect(fs.existsSync(MARK)).toBe(false)
    // No job ran a file of the fork: the only `run:` steps are the reusable workflow's own, and
    // the jobs that are not the run job check out nothing but Agent Airlock.
    for (const job of [command, publish!]) {
      const checkouts = job.steps.filter((s) => s.step.uses?.startsWith('actions/checkout@'))
      expect(checkouts.map((s) => s.step.with.path)).toEqual(['.airlock/action'])
    }
    for (const s of run!.steps.filter((x) => x.step.run !== undefined && !x.skipped))
      expect(s.step.run).toMatch(/AIRLOCK_REF|\.airlock\/action\/scripts\/register-gvisor\.sh/)

    // One review on the fork's pull request at its head, and the pending gate there.
    const reviews = world.api.reviews.filter((x) => x.user.login === ACTIONS_BOT.login)
    expect(reviews.map((x) => [x.pull, x.commit_id])).toEqual([[FORK_PR, forkHead]])
    expect(gate(world, forkHead)).toEqual(['pending'])
  }, 600_000)

  test("a non-writer's command is refused with a reply; nothing runs", async () => {
    await setUp()
    addForkPullRequest(world, FORK_PR, FORK_FILES)
    for (const user of [PEOPLE.reader, PEOPLE.mallory]) {
      const before = world.api.comments.length
      const { command, run } = await commentRun(
        stage,
        world,
        commentOn(user, '/airlock run fix the failing test', FORK_PR)
      )
      expectSuccess(command)
      expect(command.outputs['run-requested']).toBe('false')
      expect(run).toBeUndefined()
      // The stand-in also holds the command itself (the event's comment is delivered first).
      const replies = world.api.comments
        .slice(before)
        .filter((c) => c.user.type === 'Bot' && c.body.startsWith('Agent Airlock'))
      expect(replies).toEqual([
        expect.objectContaining({
          issue: FORK_PR,
          body: expect.stringMatching(
            new RegExp(`^Agent Airlock: run not started: .*${user.login}`)
          )
        })
      ])
    }
    expect(world.api.reviews).toEqual([])
    expect(world.api.statuses).toEqual([])
  }, 300_000)

  test('a push between the command and the run does not change what runs: the head pinned at the comment', async () => {
    await setUp()
    const pinned = addForkPullRequest(world, FORK_PR, FORK_FILES)
    let moved = ''
    const { command, run } = await commentRun(
      stage,
      world,
      commentOn(PEOPLE.writer, '/airlock run fix the failing test', FORK_PR),
      { between: () => (moved = forkPush(world, FORK_PR, { 'LATE.md': 'pushed after\n' })) }
    )
    expectSuccess(command)
    expect(command.outputs['head-sha']).toBe(pinned)
    expect(moved).not.toBe(pinned)
    expect(world.api.pulls.get(FORK_PR)?.foreignHeadSha).toBe(moved)
    expectSuccess(run)
    const action = run!.steps.find((s) => s.step.id === 'airlock')!
    expect(action.inputs.ref).toBe(pinned)
    expect(gitIn(run!.workspace, ['rev-parse', 'HEAD']).trim()).toBe(pinned)
    expect(fs.existsSync(path.join(run!.workspace, 'LATE.md'))).toBe(false)
    expect(report(run!).repo.headSha).toBe(pinned)
    // Nothing is set on the commit the command never saw.
    expect(gate(world, moved)).toEqual([])
  }, 600_000)
})

describe("attack: a caller's `dockerfile:` on a fork's pull request", () => {
  test("the fork's Dockerfile is never built: the run fails with a configuration error naming dockerfile and the fix", async () => {
    await setUp()
    const label = `dev.airlock.test.fork-build=${process.pid}-${Date.now()}`
    const forkHead = addForkPullRequest(world, FORK_PR, {
      ...FORK_FILES,
      // The fork's own agent image: its build steps would run on the runner's engine.
      '.github/airlock/Dockerfile': `ARG BASE=busybox@sha256:${'0'.repeat(64)}\nFROM \${BASE}\nLABEL ${label}\nRUN echo built by the fork\n`
    })
    // examples/comment-run.yml with the caller's own Dockerfile instead of the preset (and so
    // without the preset's model route and its budget).
    const read: ReadWorkflow = (f) => {
      const text = fs.readFileSync(path.join(ROOT, f), 'utf8')
      return f === 'examples/comment-run.yml'
        ? text
            .replace(
              '      agent: claude-code\n',
              '      dockerfile: .github/airlock/Dockerfile\n      agent-command: agent\n'
            )
            .replace(/^ {6}max-model-(requests|tokens): .*\n/gm, '')
        : text
    }
    const busybox = imageId('airlock-local/busybox:1')
    const { command, run, publish } = await commentRun(
      stage,
      world,
      commentOn(PEOPLE.writer, '/airlock run fix the failing test', FORK_PR),
      {
        read,
        // A hosted runner pulls the pinned base; here it is the local image.
        machineInputs: (step): Record<string, string> =>
          step.with.mode === 'run' || step.with.mode === 'plan'
            ? { 'build-args': `BASE=${busybox}`, memory: '256m', cpus: '1' }
            : {}
      }
    )
    const built = execFileSync('docker', ['images', '-q', '--filter', `label=${label}`])
      .toString()
      .split('\n')
      .filter((id) => id !== '')
    // Were it built, the image is this test's to remove.
    for (const id of built) execFileSync('docker', ['rmi', '-f', id])
    expectSuccess(command)
    expect(command.outputs['head-sha']).toBe(forkHead)
    expect(run?.result).toBe('failure')
    const action = run!.steps.find((s) => s.step.id === 'airlock')!
    expect(action.inputs.dockerfile).toBe('.github/airlock/Dockerfile')
    expect(action.code).not.toBe(0)
    expect(action.stdout).toMatch(
      /::error title=Agent Airlock%3A configuration::dockerfile: the commit [0-9a-f]{40} this issue_comment run works on is on no branch of this repository \(a fork's pull request head\); an image is never built from a fork's head.*`agent: claude-code`.*`image: name@sha256:/
    )
    expect(jobLog(run!)).not.toMatch(/building the agent image/)
    expect(built).toEqual([])
    expect(publish?.ran ?? false).toBe(false)
    expect(world.api.reviews).toEqual([])
    expect(gate(world, forkHead)).toEqual([])
  }, 300_000)
})

describe('approvals that mean more (examples/approve.yml)', () => {
  test('a change to a protected path stays pending after a plain approval (the reply says why), green after `protected`', async () => {
    await setUp('protected-paths:\n  - +GREETING.md\n')
    const { run, publish, runId } = await pullRequestRun(stage, world, refs)
    expectSuccess(run)
    expectSuccess(publish)
    const diff = run.outputs['diff-sha256']
    expect(diff).toMatch(/^[0-9a-f]{64}$/)
    const prefix = diff.slice(0, 12)

    const plain = await approveRun(stage, world, {
      user: PEOPLE.writer,
      body: `/airlock approve ${prefix}`,
      runId,
      base: refs.base
    })
    expectSuccess(plain)
    expect(gate(world, refs.head).at(-1)).toBe('pending')
    // The reply names the exact command to copy, as a code span.
    expect(repliesTo(7).at(-1)).toContain(
      `the gate stays pending: this change touches protected paths; approve it with \`/airlock approve ${prefix} protected\` to acknowledge them`
    )

    const acknowledged = await approveRun(stage, world, {
      user: PEOPLE.writer,
      body: `/airlock approve ${prefix} protected`,
      runId,
      base: refs.base
    })
    expectSuccess(acknowledged)
    expect(gate(world, refs.head).at(-1)).toBe('success')
  }, 600_000)

  test('with `required-approvals: 2` one approval is not enough; a second writer’s turns the gate green', async () => {
    await setUp('required-approvals: 2\n')
    const { run, publish, runId } = await pullRequestRun(stage, world, refs)
    expectSuccess(run)
    expectSuccess(publish)
    const prefix = run.outputs['diff-sha256'].slice(0, 12)
    const approve = (user: (typeof PEOPLE)[string]): Promise<JobResult> =>
      approveRun(stage, world, {
        user,
        body: `/airlock approve ${prefix}`,
        runId,
        base: refs.base
      })

    expectSuccess(await approve(PEOPLE.writer))
    expect(gate(world, refs.head).at(-1)).toBe('pending')
    expect(world.api.statuses.filter((s) => s.sha === refs.head).at(-1)?.description).toMatch(
      /^approvals 1\/2 by @writer-wendy for diff /
    )
    expect(repliesTo(7).at(-1)).toMatch(/approval counted.*1.*2/)

    expectSuccess(await approve(PEOPLE.maintainer))
    expect(gate(world, refs.head).at(-1)).toBe('success')
  }, 600_000)
})
