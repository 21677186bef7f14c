/**
 * Runs a writer commanded — `/airlock run <instructions>` (examples/comment-run.yml) and a manual
 * run for a pull request (examples/manual-task.yml) — evaluated as GitHub evaluates the workflow
 * files: the reusable workflow runs the pinned head (a fork's too), under the policy of the base
 * (the default branch for a manual run), with the preset, its key only on the action step (which
 * hands it to the egress proxy) and the model budget; the review goes to that pull request.
 */
import {
  githubContext,
  jobRuns,
  jobSteps,
  loadWorkflow,
  resolveCall,
  type Contexts
} from '../../__fixtures__/workflows.js'

const KEY = 'sk-canary-commanded-run'
const HEAD = 'f0'.repeat(20)
const MOVED = 'e1'.repeat(20)
const BASE = 'c'.repeat(40)
const MAIN = 'b'.repeat(40)

/** The command job's outputs for the fork's pull request 21 (what command mode pins). */
const commanded = {
  command: {
    result: 'success',
    outputs: {
      'run-requested': 'true',
      task: 'fix the failing test',
      'head-sha': HEAD,
      'base-sha': BASE,
      'pull-request': '21'
    }
  }
}

function commentContext(): Contexts {
  // The issue_comment event of a comment on the fork's pull request (its head has moved since:
  // the event carries no head, and what runs is the pinned one).
  const event = {
    action: 'created',
    issue: { number: 21, pull_request: { url: 'u' } },
    comment: { id: 1, body: '/airlock run fix the failing test', user: { login: 'writer' } },
    repository: { full_name: 'octo-org/hello', default_branch: 'main' }
  }
  return {
    github: githubContext('issue_comment', event, { sha: MAIN, ref: 'refs/heads/main' }),
    secrets: { ANTHROPIC_API_KEY: KEY },
    needs: commanded
  }
}

async function calledRun(file: string, job: string, ctx: Contexts) {
  const caller = await loadWorkflow(file)
  expect(jobRuns(caller, job, ctx)).toBe(true)
  const call = await resolveCall(caller, job, ctx)
  const inner: Contexts = { ...ctx, inputs: call.inputs, secrets: call.secrets }
  return {
    call,
    run: jobSteps(call.callee, 'run', inner),
    publish: jobSteps(call.callee, 'publish', { ...inner, needs: { run: { outputs: {} } } }),
    progress: jobSteps(call.callee, 'progress', inner),
    applies: jobRuns(call.callee, 'apply', {
      ...inner,
      needs: { run: { result: 'success', outputs: { outcome: 'success' } }, publish: {} }
    })
  }
}

describe("a writer's /airlock run on a fork's pull request (examples/comment-run.yml)", () => {
  test('the pinned fork head runs with the preset; the key reaches only the action step; the base policy applies', async () => {
    const { run, publish, applies, progress } = await calledRun(
      'examples/comment-run.yml',
      'airlock',
      commentContext()
    )
    // The plan (which compares the head with the base to choose the tier) and the progress check
    // run are on the pinned head too, not on the default branch's commit the event carries.
    expect(run.find((s) => s.id === 'plan')!.with.ref).toBe(HEAD)
    expect(progress.find((s) => s.with.mode === 'progress')!.with.ref).toBe(HEAD)
    const checkout = run.find((s) => s.uses?.startsWith('actions/checkout@') && !s.with.path)!
    expect(checkout.with).toMatchObject({ ref: HEAD, 'persist-credentials': 'false' })
    const action = run.find((s) => s.id === 'airlock')!
    expect(action.with).toMatchObject({
      mode: 'run',
      ref: HEAD,
      'policy-base': BASE,
      agent: 'claude-code',
      task: 'fix the failing test'
    })
    expect(Number(action.with['max-model-requests'])).toBeGreaterThan(0)
    expect(Number(action.with['max-model-tokens'])).toBeGreaterThan(0)
    // The key: only the action step's AIRLOCK_AGENT_API_KEY (the proxy's credential route).
    expect(action.env.AIRLOCK_AGENT_API_KEY).toBe(KEY)
    for (const s of run.filter((x) => x !== action)) {
      const seen = Object.values({ ...s.env, ...s.with }).filter((v) => v.includes(KEY))
      expect([s.index, seen]).toEqual([s.index, []])
    }
    // Nothing of the fork runs on the runner: the only scripts are the pinned check and the
    // registration script of the Agent Airlock checkout.
    for (const s of run.filter((x) => x.run !== undefined && x.runs)) {
      expect(s.run).toMatch(/^(if ! printf|bash \.airlock\/action\/scripts\/register-gvisor\.sh)/)
    }
    // The review and the gate go to the commanded pull request; nothing is applied.
    expect(publish.find((s) => s.with.mode === 'publish')!.with['pull-request']).toBe('21')
    expect(applies).toBe(false)
  })

  test('a push after the command does not change what runs', async () => {
    const ctx = commentContext()
    // The pull request's head as GitHub would report it now.
    ;(ctx.github.event as Record<string, unknown>).pull_request = undefined
    ;(ctx.github as Record<string, unknown>).sha = MOVED
    const { run } = await calledRun('examples/comment-run.yml', 'airlock', ctx)
    expect(run.find((s) => s.id === 'airlock')!.with.ref).toBe(HEAD)
  })

  test('a refused command starts no agent', async () => {
    const ctx = commentContext()
    ctx.needs = { command: { result: 'success', outputs: { 'run-requested': 'false' } } }
    expect(jobRuns(await loadWorkflow('examples/comment-run.yml'), 'airlock', ctx)).toBe(false)
  })
})

describe('a manual run for a pull request (examples/manual-task.yml)', () => {
  const dispatch = (pull: string): Contexts => ({
    github: githubContext(
      'workflow_dispatch',
      {
        inputs: { task: 'fix it', 'pull-request': pull },
        sender: { login: 'writer', type: 'User' },
        repository: { full_name: 'octo-org/hello', default_branch: 'main' }
      },
      { sha: MAIN, ref: 'refs/heads/main' }
    ),
    inputs: { task: 'fix it', 'pull-request': pull },
    secrets: { ANTHROPIC_API_KEY: KEY },
    needs: {
      target: {
        result: pull === '' ? 'skipped' : 'success',
        outputs: pull === '' ? {} : { 'run-requested': 'true', 'head-sha': HEAD }
      }
    }
  })

  test("runs the pull request's head pinned at dispatch, under the default branch's policy, and publishes to it", async () => {
    const caller = await loadWorkflow('examples/manual-task.yml')
    expect(jobRuns(caller, 'target', dispatch('21'))).toBe(true)
    const target = jobSteps(caller, 'target', dispatch('21')).find((s) => s.id === 'command')!
    expect(target.with).toMatchObject({ mode: 'command', 'pull-request': '21', task: 'fix it' })
    const { run, publish, applies } = await calledRun(
      'examples/manual-task.yml',
      'airlock',
      dispatch('21')
    )
    expect(run.find((s) => s.id === 'airlock')!.with).toMatchObject({
      ref: HEAD,
      'policy-base': 'main',
      agent: 'claude-code'
    })
    const pub = publish.find((s) => s.with.mode === 'publish')!
    expect([pub.runs, pub.with['pull-request']]).toEqual([true, '21'])
    expect(applies).toBe(false)
  })

  test("without a pull request: the selected commit, still the default branch's policy, and apply", async () => {
    const caller = await loadWorkflow('examples/manual-task.yml')
    expect(jobRuns(caller, 'target', dispatch(''))).toBe(false)
    const { run, applies } = await calledRun('examples/manual-task.yml', 'airlock', dispatch(''))
    expect(run.find((s) => s.id === 'airlock')!.with).toMatchObject({
      ref: MAIN,
      'policy-base': 'main'
    })
    expect(applies).toBe(true)
  })
})
