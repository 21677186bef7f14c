import { TOKEN, makeWorld } from '../../__fixtures__/action-harness.js'
import type { World } from '../../__fixtures__/action-harness.js'
import type { WorkflowJob } from '../../__fixtures__/github-stand-in.js'
import type { RunEvent } from '../../src/event.js'
import { createClient } from '../../src/github/client/client.js'
import { readRunner } from '../../src/runner.js'
import {
  PROGRESS_CHECK_NAME,
  findJob,
  progressMode,
  progressSummary
} from '../../src/github/modes/progress.js'
import { MemoryLogger } from '../../src/log.js'
import { completeProgressCheck } from '../../src/cleanup-step.js'

/** progress mode against the OpenAPI-validating GitHub stand-in, the run job played by the test. */
let world: World
beforeEach(async () => {
  world = await makeWorld()
})
afterEach(async () => {
  await world.close()
})

const RUN_ID = '4242'

function event(headSha: string): RunEvent {
  return {
    name: 'pull_request',
    repository: { owner: 'octo-org', repo: 'hello' },
    serverUrl: 'https://github.com',
    run: { id: RUN_ID, attempt: '1' },
    pullRequest: { number: 7, headSha, headRepository: 'octo-org/hello', fork: false }
  }
}

function runJob(status: WorkflowJob['status'], step?: string): WorkflowJob {
  return {
    id: 77,
    name: 'airlock / run',
    status,
    conclusion: status === 'completed' ? 'success' : null,
    started_at: new Date(Date.now() - 65_000).toISOString(),
    steps: step === undefined ? [] : [{ name: step, status: 'in_progress', number: 5 }]
  }
}

test('an in-progress check run follows the run job, then is completed neutral when it ends', async () => {
  const jobs = [
    {
      id: 76,
      name: 'airlock / progress',
      status: 'in_progress',
      conclusion: null,
      started_at: null,
      steps: []
    },
    runJob('in_progress', 'Run the agent in the sandbox')
  ] as WorkflowJob[]
  world.api.workflowJobs.set(RUN_ID, jobs)
  let looks = 0
  let whileRunning: { status: string; summary: string | null } | undefined
  world.api.beforeRoute = (route) => {
    if (route !== 'GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs') return
    looks++
    // The third look finds the run job ended: what the check said while it ran is kept first.
    if (looks === 3) {
      whileRunning = { ...world.api.checkRuns[0].history.at(-1)! }
      jobs[1] = runJob('completed')
    }
  }
  const read = (name: string): string | undefined => ({ 'github-token': TOKEN })[name]
  const log = new MemoryLogger()
  await progressMode(
    read,
    log,
    { event: event(world.base), workspace: world.workspace, runner: readRunner({}) },
    { intervalMs: 10, maxMs: 60_000, maxFailures: 3 },
    createClient({ token: TOKEN, log, baseUrl: world.api.url })
  )
  expect(world.api.violations).toEqual([])
  expect(world.api.checkRuns).toHaveLength(1)
  const check = world.api.checkRuns[0]
  expect(check).toMatchObject({
    name: PROGRESS_CHECK_NAME,
    head_sha: world.base,
    status: 'completed',
    conclusion: 'neutral',
    details_url: 'https://github.com/octo-org/hello/actions/runs/4242/job/77'
  })
  expect(whileRunning?.status).toBe('in_progress')
  expect(whileRunning?.summary).toMatch(
    /Step: \*\*Run the agent in the sandbox\*\* · running for 1 min \d+ s/
  )
  expect(check.output.summary).toContain('the review on the pull request replaces this check')
  // A check run only: no commit status (the gate) was written.
  expect(world.api.statuses).toEqual([])
  expect(world.api.requests.map((r) => r.route).filter((r) => r?.includes('statuses'))).toEqual([])
})

test('the run jobs that cannot be read stop the watch after a bounded number of looks', async () => {
  // No jobs known for the run: every look is a 404.
  const log = new MemoryLogger()
  await progressMode(
    (name) => ({ 'github-token': TOKEN })[name],
    log,
    { event: event(world.base), workspace: world.workspace, runner: readRunner({}) },
    { intervalMs: 1, maxMs: 60_000, maxFailures: 3 },
    createClient({ token: TOKEN, log, baseUrl: world.api.url, retries: 0 })
  )
  expect(world.api.checkRuns[0]).toMatchObject({ status: 'completed', conclusion: 'neutral' })
  expect(world.api.checkRuns[0].output.summary).toContain('could not be read')
  // The first look, then three failed ones.
  expect(
    world.api.requests.filter(
      (r) => r.route === 'GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs'
    )
  ).toHaveLength(4)
  world.api.violations.length = 0
})

test('the job is found by its name, also inside a called workflow; the summary says the step', () => {
  const job = (id: number, name: string) =>
    ({ id, name, status: 'in_progress', conclusion: null, html_url: null }) as const
  expect(findJob([job(1, 'build'), job(2, 'airlock / run')], 'run')?.id).toBe(2)
  expect(findJob([job(1, 'running'), job(3, 'run')], 'run')?.id).toBe(3)
  expect(findJob([job(1, 'build')], 'run')).toBeUndefined()
  expect(progressSummary(undefined, 0)).toMatch(/waiting for a runner/)
  const summary = progressSummary(
    {
      ...job(2, 'run'),
      started_at: '2025-01-01T00:00:00Z',
      steps: [{ name: 'Check `out` <b>', status: 'in_progress', number: 1 }]
    },
    Date.parse('2025-01-01T00:00:42Z')
  )
  // The step's name is shown as text: no markup of its own reaches the summary.
  expect(summary).toMatch(/^Step: \*\*Check +out +b +\*\* · running for 42 s\./)
  expect(summary).not.toMatch(/[`<>]/)
})

test('a cancelled progress job: the step saves its check run while it is in progress, and the post step completes it as cancelled', async () => {
  const jobs = [runJob('in_progress', 'Run the agent in the sandbox')] as WorkflowJob[]
  world.api.workflowJobs.set(RUN_ID, jobs)
  let looks = 0
  world.api.beforeRoute = (route) => {
    if (route === 'GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs' && ++looks === 3)
      jobs[0] = runJob('completed')
  }
  const remembered: string[] = []
  const log = new MemoryLogger()
  await progressMode(
    (name) => ({ 'github-token': TOKEN })[name],
    log,
    { event: event(world.base), workspace: world.workspace, runner: readRunner({}) },
    { intervalMs: 10, maxMs: 60_000, maxFailures: 3, remember: (u) => remembered.push(u) },
    createClient({ token: TOKEN, log, baseUrl: world.api.url })
  )
  const first = world.api.checkRuns[0]
  // While in progress the post step would find the check run; once completed, nothing.
  expect(remembered).toEqual([`${world.api.url}/repos/octo-org/hello/check-runs/${first.id}`, ''])

  // A job cancelled while its check run is in progress: the post step gets the saved address.
  const created = await fetch(`${world.api.url}/repos/octo-org/hello/check-runs`, {
    method: 'POST',
    headers: { authorization: `token ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: PROGRESS_CHECK_NAME,
      head_sha: world.base,
      status: 'in_progress'
    })
  })
  const { id } = (await created.json()) as { id: number }
  await completeProgressCheck(`${world.api.url}/repos/octo-org/hello/check-runs/${id}`, TOKEN)
  expect(world.api.checkRuns.find((c) => c.id === id)).toMatchObject({
    status: 'completed',
    conclusion: 'cancelled'
  })
  expect(world.api.violations).toEqual([])
  // A refused completion is an error the post step reports as a warning, never a crash.
  await expect(
    completeProgressCheck(`${world.api.url}/repos/octo-org/hello/check-runs/999999`, TOKEN)
  ).rejects.toThrow(/HTTP 404/)
})
