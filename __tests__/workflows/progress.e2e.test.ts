/**
 * Progress on the pull request while the agent works, through the workflow files: on a
 * pull_request event examples/pull-request.yml calls .github/workflows/agent-run.yml, whose
 * `progress` job runs next to its `run` job as GitHub runs them (concurrently, each with its own
 * token of its job's permissions). The runner emulation keeps the Actions API's view of the run's
 * jobs current as the run job's steps start and end; the progress job follows it through
 * `GET /actions/runs/{run_id}/jobs` at its real interval and shows it as a check run.
 */
import type { World } from '../../__fixtures__/action-harness.js'
import { ACTIONS_BOT } from '../../__fixtures__/github-stand-in.js'
import {
  PROGRESS_CHECK,
  gate,
  jobLog,
  makePullRequestWorld,
  pullRequestRun,
  startModelStage,
  stopModelStage,
  type ModelStage,
  type ProgressWatch,
  type PullRefs
} from '../../__fixtures__/preset-run.js'

let stage: ModelStage
let world: World
let refs: PullRefs

beforeAll(async () => {
  stage = await startModelStage()
}, 300_000)
afterAll(async () => {
  await stopModelStage(stage)
}, 60_000)
beforeEach(async () => {
  ;({ world, refs } = await makePullRequestWorld({
    'README.md': '# hello\n',
    '.github/airlock/review-task.md': 'Write a file GREETING.md that greets the reader.\n'
  }))
})
afterEach(async () => {
  const violations = [...world.api.violations, ...stage.results.violations]
  stage.results.reset()
  await world.close()
  expect(violations).toEqual([])
})

test('while the run job is in its agent step the pull request shows an in-progress check run naming it, with the job behind Details; neutral when the job ends; the progress token holds checks: write and actions: read only, and sets no status', async () => {
  const watch: ProgressWatch = { step: 'Run the agent in the sandbox' }
  const { run, publish, progress, progressToken, runId, call } = await pullRequestRun(
    stage,
    world,
    refs,
    { watch }
  )
  expect([run.result, jobLog(run)]).toEqual(['success', expect.any(String)])
  expect([publish.result, jobLog(publish)]).toEqual(['success', expect.any(String)])
  expect([progress?.ran, progress?.result, jobLog(progress!)]).toEqual([
    true,
    'success',
    expect.any(String)
  ])
  const step = progress!.steps.find((s) => s.step.with.mode === 'progress')!
  // The step is continue-on-error: its own exit code says whether it worked.
  expect([step.code, step.stderr]).toEqual([0, expect.not.stringMatching(/::error/)])

  // During the agent step: the run job is listed under the caller's job, in that step.
  expect(watch.job).toMatchObject({ name: 'airlock / run', status: 'in_progress' })
  expect(watch.job?.steps.find((s) => s.status === 'in_progress')?.name).toBe(watch.step)
  expect(watch.seen).toEqual({
    status: 'in_progress',
    summary: expect.stringContaining(`Step: **${watch.step}**`),
    details_url: `https://github.com/octo-org/hello/actions/runs/${runId}/job/${watch.job?.id}`
  })

  // After: one check run on the pull request's head, by the workflow's identity, completed neutral.
  const checks = world.api.checkRuns.filter((c) => c.name === PROGRESS_CHECK)
  expect(checks).toHaveLength(1)
  expect(checks[0]).toMatchObject({
    head_sha: refs.head,
    status: 'completed',
    conclusion: 'neutral',
    creator: ACTIONS_BOT
  })
  expect(checks[0].history[0].status).toBe('in_progress')
  expect(checks[0].output.summary).toMatch(/The agent job ended \(success\)/)

  // The progress job's token: what the workflow gives it, and what it did with it.
  expect(call.permissions.progress).toEqual({ checks: 'write', actions: 'read' })
  const mine = world.api.requests.filter((r) => r.token === progressToken)
  expect(mine.length).toBeGreaterThanOrEqual(3)
  for (const r of mine) {
    expect([r.route, r.status]).toEqual([
      expect.stringMatching(
        /^(GET \/repos\/\{owner\}\/\{repo\}\/actions\/runs\/\{run_id\}\/jobs|(POST|PATCH) \/repos\/\{owner\}\/\{repo\}\/check-runs(\/\{check_run_id\})?)$/
      ),
      expect.any(Number)
    ])
    expect(r.status).toBeLessThan(300)
  }
  expect(mine.some((r) => r.route?.startsWith('PATCH '))).toBe(true)
  // No commit status from it: the gate is the publish job's alone, pending.
  expect(mine.filter((r) => /statuses/.test(r.route ?? ''))).toEqual([])
  expect(world.api.statuses.every((s) => s.context === 'airlock/approval')).toBe(true)
  expect(gate(world, refs.head)).toEqual(['pending'])
}, 600_000)
