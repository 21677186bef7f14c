// Which jobs of the example workflows (as shipped) GitHub starts for an event, as it evaluates
// their `if:`, and what they pass on: the fork publisher only for a fork's finished run, the
// approval only for an approval (a plain comment runs nothing), one approval decision at a time,
// the isolation tier chosen from the run's risk, and no progress check run on a dry run.
import * as fs from 'node:fs'
import * as path from 'node:path'
import YAML from 'yaml'
import { webhook } from '../../__fixtures__/action-harness.js'
import {
  ROOT,
  githubContext,
  jobRuns,
  jobSteps,
  loadWorkflow,
  resolveCall,
  type Contexts
} from '../../__fixtures__/workflows.js'

const MAIN = 'e'.repeat(40)

function workflowRun(o: { conclusion: string; fork: boolean; event?: string }): Contexts {
  const event = webhook('workflow_run', 'completed', (p) => {
    p.workflow_run.conclusion = o.conclusion
    p.workflow_run.event = o.event ?? 'pull_request'
    p.workflow_run.head_repository.full_name = o.fork ? 'mallory/hello' : 'octo-org/hello'
  })
  return {
    github: githubContext('workflow_run', event, { sha: MAIN, ref: 'refs/heads/main' })
  }
}

function comment(body: string, action = 'created'): Contexts {
  const event = webhook('issue_comment', action, (p) => {
    p.comment.body = body
    p.issue.pull_request = { url: 'https://api.github.com/repos/octo-org/hello/pulls/7' }
  })
  return { github: githubContext('issue_comment', event, { sha: MAIN, ref: 'refs/heads/main' }) }
}

test.each([
  ["a fork's run that succeeded", { conclusion: 'success', fork: true }, true],
  [
    "a fork's run that failed (no evidence: the download would fail)",
    { conclusion: 'failure', fork: true },
    false
  ],
  ["a fork's cancelled run", { conclusion: 'cancelled', fork: true }, false],
  ['a same-repository run (it published itself)', { conclusion: 'success', fork: false }, false]
])('examples/fork-publish.yml: %s → publish runs: %s', async (_n, o, runs) => {
  const w = await loadWorkflow('examples/fork-publish.yml')
  expect(jobRuns(w, 'publish', workflowRun(o))).toBe(runs)
})

test.each([
  ['a plain comment', comment('LGTM, thanks!'), false],
  ['an /airlock run command', comment('/airlock run fix the test'), false],
  ['an /airlock approve command', comment('/airlock approve 3f2a9c'), true],
  ['an edited /airlock approve', comment('/airlock approve 3f2a9c', 'edited'), false],
  [
    'the review relay finishing',
    workflowRun({ conclusion: 'success', fork: true, event: 'pull_request_review' }),
    true
  ],
  ['another workflow finishing', workflowRun({ conclusion: 'success', fork: false }), false]
])(
  'examples/approve.yml: %s → the calling job runs (and loads agent-approve.yml): %s',
  async (_n, ctx, runs) => {
    const w = await loadWorkflow('examples/approve.yml')
    expect(jobRuns(w, 'approve', ctx)).toBe(runs)
  }
)

test('examples/approve.yml decides one approval at a time, never cancelling one in progress', () => {
  const wf = YAML.parse(fs.readFileSync(path.join(ROOT, 'examples/approve.yml'), 'utf8')) as {
    concurrency?: unknown
    jobs: { approve: { concurrency?: { group?: string; 'cancel-in-progress'?: boolean } } }
  }
  // At the job (after its `if:`): a plain comment never enters the group, so it can never
  // displace a pending approval.
  expect(wf.concurrency).toBeUndefined()
  expect(wf.jobs.approve.concurrency).toEqual({
    group: 'airlock-approval',
    'cancel-in-progress': false
  })
})

test.each(['examples/pull-request.yml', 'examples/comment-run.yml', 'examples/manual-task.yml'])(
  '%s asks for isolation: auto (gVisor for a fork, network or the key in the proxy)',
  async (file) => {
    const w = await loadWorkflow(file)
    const github = githubContext(
      'pull_request',
      webhook('pull_request', 'opened', () => {}),
      {
        sha: MAIN,
        ref: 'refs/pull/7/merge'
      }
    )
    const call = await resolveCall(w, 'airlock', {
      github,
      inputs: { 'pull-request': '7', task: 'x' },
      needs: { command: { outputs: {} }, target: { outputs: {} } }
    })
    expect(call.inputs.isolation).toBe('auto')
  }
)

test('agent-run.yml: a dry run shows no progress check run (it writes nothing to GitHub)', async () => {
  const w = await loadWorkflow('.github/workflows/agent-run.yml')
  const github = githubContext(
    'pull_request',
    webhook('pull_request', 'opened', () => {}),
    {
      sha: MAIN,
      ref: 'refs/pull/7/merge'
    }
  )
  expect(jobRuns(w, 'progress', { github, inputs: { 'dry-run': true } })).toBe(false)
  expect(jobRuns(w, 'progress', { github, inputs: { 'dry-run': false } })).toBe(true)
})

test.each([
  ['a same-repository pull request', 'octo-org/hello', { airlock: true, fork: false }],
  [
    "a fork's pull request (no key: no red mark, the gate waits for /airlock run)",
    'mallory/hello',
    { airlock: false, fork: true }
  ]
])('examples/pull-request.yml on %s → jobs %p', async (_n, headRepo, jobs) => {
  const w = await loadWorkflow('examples/pull-request.yml')
  const event = webhook('pull_request', 'opened', (p) => {
    p.pull_request.head.repo.full_name = headRepo
    p.repository.full_name = 'octo-org/hello'
  })
  const ctx = {
    github: githubContext('pull_request', event, { sha: MAIN, ref: 'refs/pull/7/merge' })
  }
  expect({ airlock: jobRuns(w, 'airlock', ctx), fork: jobRuns(w, 'fork', ctx) }).toEqual(jobs)
})

test.each([
  ['a bare /airlock run', '', '.github/airlock/review-task.md'],
  ['/airlock run with instructions', 'fix the cart', 'fix the cart']
])('examples/comment-run.yml: %s → the task agent-run.yml gets is %p', async (_n, given, task) => {
  const w = await loadWorkflow('examples/comment-run.yml')
  const ctx: Contexts = {
    github: comment('/airlock run').github,
    needs: { command: { outputs: { 'run-requested': 'true', task: given } } }
  }
  const call = await resolveCall(w, 'airlock', ctx)
  expect(call.inputs.task).toBe(task)
})

describe("the App identity end to end: a command's run publishes as the App the approval believes", () => {
  const APP = { AIRLOCK_APP_CLIENT_ID: 'Iv1.gate', AIRLOCK_APP_PRIVATE_KEY: 'key' }
  async function publishSteps(file: string, secrets: Record<string, string>) {
    const w = await loadWorkflow(file)
    const ctx: Contexts = {
      github: comment('/airlock run').github,
      inputs: { 'pull-request': '7', task: 'x' },
      needs: {
        command: { outputs: { 'run-requested': 'true', task: 'x' } },
        target: { outputs: { 'run-requested': 'true' } }
      },
      secrets
    }
    const call = await resolveCall(w, 'airlock', ctx)
    const inner: Contexts = { ...ctx, inputs: call.inputs, secrets: call.secrets }
    const env = {
      AIRLOCK_USE_APP: String(
        (call.secrets.AIRLOCK_APP_CLIENT_ID ?? '') !== '' &&
          (call.secrets.AIRLOCK_APP_PRIVATE_KEY ?? '') !== ''
      )
    }
    return jobSteps(call.callee, 'publish', {
      ...inner,
      env,
      steps: { 'app-token': { outputs: { token: 'ghs_minted', 'app-slug': 'airlock-gate' } } }
    })
  }

  test.each(['examples/comment-run.yml', 'examples/manual-task.yml'])(
    '%s with the App secrets: the token step runs and publish posts with its token as the App',
    async (file) => {
      const steps = await publishSteps(file, APP)
      const mint = steps.find((s) => s.id === 'app-token')
      expect(mint?.runs).toBe(true)
      expect(mint?.with).toMatchObject({ 'client-id': 'Iv1.gate', 'private-key': 'key' })
      const publish = steps.find((s) => s.with.mode === 'publish')
      expect(publish?.with).toMatchObject({
        'github-token': 'ghs_minted',
        'app-slug': 'airlock-gate'
      })
    }
  )

  test("examples/pull-request.yml never hands a pull_request run the App's key", async () => {
    const steps = await publishSteps('examples/pull-request.yml', APP)
    expect(steps.find((s) => s.id === 'app-token')?.runs).toBe(false)
  })
})
