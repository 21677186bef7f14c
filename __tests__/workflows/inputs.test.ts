/**
 * What a caller of the reusable workflow can reach: every input of action.yml that a run-mode
 * caller may set is either offered by .github/workflows/agent-run.yml and handed to the action
 * unchanged under the same name, or listed below with the reason it is not. Checked by
 * evaluating a call as GitHub does (GitHub's parser and evaluator), so a new action input that
 * is neither offered nor excluded fails here, and so does an input the workflow declares but
 * forgets to pass on.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import YAML from 'yaml'
import {
  ROOT,
  githubContext,
  jobSteps,
  loadWorkflow,
  resolveCall,
  type Contexts,
  type ReadWorkflow
} from '../../__fixtures__/workflows.js'

/** Inputs of action.yml that agent-run.yml does not offer its callers, and why. */
const NOT_OFFERED: Record<string, string> = {
  mode: 'the run job is mode run; publish and apply are jobs of their own',
  path: 'the run job checks the repository out at the workspace root',
  ref: "the run job sets the pull request's head commit (github.sha for other events)",
  'output-dir': 'the workflow names the folder it uploads and the later jobs download',
  'github-token': "the job's own read-only token",
  publish: 'the run step never publishes: the workflow input publish drives the publish job',
  'gate-context': 'read by the publish and apply jobs, which get the workflow input of that name',
  'fail-outcomes': 'read when publishing (the publish job), not by the run',
  'allow-self-approval': 'mode approve (agent-approve.yml, or the policy file)',
  'app-slug': 'mode approve and publish with a GitHub App (agent-approve.yml, agent-publish.yml)',
  'pull-request': 'publish and apply on events without a pull request',
  branch: 'mode apply on workflow_dispatch',
  base: 'mode apply on workflow_dispatch',
  'run-id': 'the default (<run id>-<attempt>) is unique per call and attempt',
  'artifact-name': 'the run job outputs the name the publish and apply jobs download',
  'policy-base':
    "taken from the pull request event, never from a caller's value on it (the workflow's own policy-base counts only on events without a pull request)",
  'allowed-paths':
    "a review rule: only the policy file on the base branch sets it, not the caller's workflow file, which a pull request can edit",
  'protected-paths':
    "a review rule: only the policy file on the base branch sets it, not the caller's workflow file, which a pull request can edit",
  'allow-unpinned-base':
    'weakens the image pinning: only the policy file on the base branch can allow it',
  user: "the runner's own uid is what a hosted runner needs; other uids: use the action directly",
  'continue-from':
    "the run job downloads the earlier run's artifact (continue-run-id, continue-artifact) into $RUNNER_TEMP and names that folder",
  'proxy-network':
    "names a Docker network that must exist before the step; the run job's fresh runner has none (the action makes one per run)"
}

interface ActionInput {
  description?: string
  default?: string
}
interface WorkflowInput {
  description?: string
  type: 'string' | 'boolean' | 'number'
  default?: unknown
}

const action = YAML.parse(fs.readFileSync(path.join(ROOT, 'action.yml'), 'utf8')) as {
  inputs: Record<string, ActionInput>
}
const ACTION_INPUTS = Object.keys(action.inputs)
const PASSED = ACTION_INPUTS.filter((n) => !(n in NOT_OFFERED))

/** A pull_request run in the same repository. */
const ctx: Contexts = {
  github: githubContext(
    'pull_request',
    {
      pull_request: {
        number: 7,
        head: { sha: 'a'.repeat(40), repo: { full_name: 'octo-org/hello' } },
        base: { sha: 'c'.repeat(40), repo: { full_name: 'octo-org/hello' } }
      },
      repository: { full_name: 'octo-org/hello' }
    },
    { sha: 'b'.repeat(40), ref: 'refs/pull/7/merge' }
  )
}

async function declared(): Promise<Record<string, WorkflowInput>> {
  const w = await loadWorkflow('.github/workflows/agent-run.yml')
  return (w.template.events.workflow_call?.inputs ?? {}) as Record<string, WorkflowInput>
}

/** A caller giving `given` to agent-run.yml; the run job's Agent Airlock step, evaluated. */
async function actionStepOf(given: Record<string, unknown>, planGvisor?: string) {
  const caller = YAML.stringify({
    on: 'pull_request',
    permissions: {},
    jobs: {
      airlock: {
        uses: './.github/workflows/agent-run.yml',
        permissions: {
          contents: 'read',
          'pull-requests': 'write',
          statuses: 'write',
          checks: 'write',
          actions: 'read'
        },
        with: {
          'airlock-repository': 'octo-org/agent-airlock',
          'airlock-ref': 'd'.repeat(40),
          ...given
        }
      }
    }
  })
  const read: ReadWorkflow = (f) =>
    f === 'caller.yml' ? caller : fs.readFileSync(path.join(ROOT, f), 'utf8')
  const call = await resolveCall(await loadWorkflow('caller.yml', read), 'airlock', ctx, read)
  // What the plan step answered (steps.plan.outputs.gvisor); absent: it gave no answer.
  const planned =
    planGvisor === undefined
      ? {}
      : { steps: { plan: { outputs: { gvisor: planGvisor }, outcome: 'success' } } }
  const steps = jobSteps(call.callee, 'run', {
    ...ctx,
    inputs: call.inputs,
    secrets: call.secrets,
    ...planned
  })
  return {
    steps,
    action: steps.find((s) => s.uses === './.airlock/action' && s.with.mode !== 'plan')!
  }
}

test('the exclusion list names only inputs action.yml has, each with its reason', () => {
  for (const [name, reason] of Object.entries(NOT_OFFERED)) {
    expect([name, ACTION_INPUTS.includes(name), reason.length > 10]).toEqual([name, true, true])
  }
})

test('every other action input is offered by agent-run.yml under the same name', async () => {
  const inputs = await declared()
  expect(PASSED.filter((n) => !(n in inputs))).toEqual([])
  for (const name of PASSED) {
    // A description, and no default of its own that would change the action's.
    expect([name, (inputs[name].description ?? '').length > 10]).toEqual([name, true])
    const d = inputs[name].default
    const mine = d === undefined || d === '' ? '' : String(d)
    expect([name, ['', String(action.inputs[name].default ?? '')]]).toEqual([
      name,
      expect.arrayContaining([mine])
    ])
  }
})

test('each offered input reaches the action step unchanged', async () => {
  const inputs = await declared()
  const given: Record<string, unknown> = {}
  const expected: Record<string, string> = {}
  for (const name of PASSED) {
    const type = inputs[name].type
    given[name] = type === 'boolean' ? true : type === 'number' ? 7 : `value of ${name}\nline 2`
    expected[name] = String(given[name])
  }
  const { action: step } = await actionStepOf(given)
  const reached = Object.fromEntries(PASSED.map((n) => [n, step.with[n]]))
  expect(reached).toEqual(expected)
})

test('an excluded input the workflow itself offers does not reach the run step from the caller', async () => {
  const inputs = await declared()
  const offered = Object.keys(NOT_OFFERED).filter((n) => n in inputs)
  const given = Object.fromEntries(
    offered.map((n) => [n, inputs[n].type === 'boolean' ? true : `caller's ${n}`])
  )
  const { action: step } = await actionStepOf(given)
  expect(step.with).toMatchObject({ mode: 'run', publish: 'false' })
  for (const n of offered) expect([n, step.with[n]]).not.toEqual([n, String(given[n])])
})

describe('the gVisor registration step', () => {
  const NAME = "Register gVisor in the runner's Docker"

  test.each<[string, boolean, Record<string, unknown>, string | undefined]>([
    ['the plan step says the tier is gVisor', true, {}, 'true'],
    ['the plan step says the tier is not gVisor (runc, kata...)', false, {}, 'false'],
    ["the plan step gave no answer (its error is the run step's to report)", true, {}, undefined],
    ['gvisor: true, the plan says runc', true, { gvisor: 'true' }, 'false'],
    ['gvisor: false, the plan says gVisor', false, { gvisor: 'false' }, 'true']
  ])('%s → runs: %s', async (_name, runs, given, planGvisor) => {
    const { steps } = await actionStepOf(given, planGvisor)
    const i = steps.findIndex((s) => s.run?.includes('register-gvisor.sh'))
    expect(i).toBeGreaterThan(-1)
    expect(steps[i].runs).toBe(runs)
  })

  test('runs only the pinned script, after the Agent Airlock checkout and before the action, with no expression in run', async () => {
    const { steps } = await actionStepOf({ isolation: 'runsc' })
    const wf = YAML.parse(
      fs.readFileSync(path.join(ROOT, '.github/workflows/agent-run.yml'), 'utf8')
    ) as { jobs: { run: { steps: { name?: string; run?: string }[] } } }
    const raw = wf.jobs.run.steps.find((s) => s.name === NAME)!
    expect(raw.run?.trim()).toBe('bash .airlock/action/scripts/register-gvisor.sh')
    expect(fs.existsSync(path.join(ROOT, 'scripts/register-gvisor.sh'))).toBe(true)
    const gvisor = steps.findIndex((s) => s.run?.includes('register-gvisor.sh'))
    const airlockCheckout = steps.findIndex(
      (s) => s.uses?.startsWith('actions/checkout@') && s.with.path === '.airlock/action'
    )
    const prCheckout = steps.findIndex(
      (s) => s.uses?.startsWith('actions/checkout@') && s.with.path === undefined
    )
    const actionStep = steps.findIndex(
      (s) => s.uses === './.airlock/action' && s.with.mode === 'run'
    )
    expect(prCheckout).toBeLessThan(airlockCheckout)
    expect(airlockCheckout).toBeLessThan(gvisor)
    expect(gvisor).toBeLessThan(actionStep)
    // No secret and no caller value reaches the privileged step.
    expect(steps[gvisor].env).toEqual({})
    // Its failure leaves the decision to the action, which fails closed on a missing tier.
    expect(steps[gvisor].continueOnError).toBe(true)
    expect(steps[actionStep].continueOnError).toBe(false)
  })

  test.each(['yes', 'TRUE', ''])('gvisor: %p is refused by the first step', async (value) => {
    const { steps } = await actionStepOf({ gvisor: value })
    const check = steps[0]
    expect(check.env.AIRLOCK_GVISOR).toBe(value)
    const { spawnSync } = await import('node:child_process')
    const r = spawnSync('bash', ['-e', '-c', check.run!], {
      env: { PATH: process.env.PATH, ...check.env },
      encoding: 'utf8'
    })
    expect([r.status, r.stdout]).toEqual([
      1,
      expect.stringMatching(/gvisor must be auto, true or false/)
    ])
  })
})
