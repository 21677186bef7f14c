/**
 * What the workflow-level end-to-end tests with the claude-code preset share
 * (`__tests__/workflows/pull-request.e2e.test.ts`, `progress.e2e.test.ts`,
 * `conversation.e2e.test.ts`): the stub of the model API behind a test CA on a network the test
 * owns, the results service for artifacts, GitHub's refs of a pull request, the runner of one
 * workflow run, and the example workflows run as GitHub runs them (examples/pull-request.yml with
 * its progress, run and publish jobs; examples/approve.yml on an `/airlock approve` comment).
 *
 * What this machine lacks and a hosted runner has (a registry and the internet) is given to the
 * action step only, and only where the workflow leaves the input empty: the local stand-in of the
 * pinned node base (build-args BASE), the local proxy image, and the model API's address (the
 * preset's route pointed at the stub, the stub's CA). Everything else is the files' own.
 */
import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import Docker from 'dockerode'
import { imageId, makeCerts, startStubs, type StubNet } from '../__tests__/egress/helpers.js'
import { startResultsService } from '../__tests__/support/results-service.js'
import type { ResultsService } from '../__tests__/support/results-service.js'
import { PEOPLE, PR_NUMBER, TOKEN, gitIn, makeWorld, webhook } from './action-harness.js'
import type { World } from './action-harness.js'
import { ACTIONS_BOT } from './github-stand-in.js'
import type { CheckRun, User, WorkflowJob } from './github-stand-in.js'
import { runJob, type JobResult, type RunnerSetup } from './workflow-run.js'
import {
  githubContext,
  jobRuns,
  loadWorkflow,
  resolveCall,
  type Contexts,
  type ReadWorkflow,
  type ResolvedCall
} from './workflows.js'

/** The model key the caller's secret holds (a canary: it must reach only the proxy). */
export const SECRET = `sk-ant-canary-${randomBytes(12).toString('hex')}`

/** The model stub, its CA, and the results service: started once per test file. */
export interface ModelStage {
  tmp: string
  stubs: StubNet
  ca: string
  results: ResultsService
}

export async function startModelStage(): Promise<ModelStage> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-workflow-e2e-'))
  fs.chmodSync(tmp, 0o755)
  makeCerts(path.join(tmp, 'certs'))
  const ca = fs.readFileSync(path.join(tmp, 'certs', 'ca.crt'), 'utf8')
  const stubs = await startStubs(new Docker(), path.join(tmp, 'certs'))
  const results = await startResultsService()
  return { tmp, stubs, ca, results }
}

export async function stopModelStage(stage: ModelStage | undefined): Promise<void> {
  await stage?.results.close()
  await stage?.stubs.remove()
  if (stage !== undefined) fs.rmSync(stage.tmp, { recursive: true, force: true })
}

/** The bare repository that stands in for GitHub's. */
export const remoteOf = (world: World): string => path.join(world.root, 'remote.git')

/** The commits of a pull_request run: the pull request's head and base, and GitHub's merge. */
export interface PullRefs {
  head: string
  base: string
  merge: string
}

/**
 * GitHub's side after a push to `feature` (pushed from the world's workspace): refs/pull/N/head
 * and a fresh merge commit in refs/pull/N/merge; the push recorded in the activity list.
 */
export function updatePullRefs(world: World): PullRefs {
  const ws = world.workspace
  const remote = remoteOf(world)
  gitIn(ws, ['fetch', '-q', remote, '+refs/heads/*:refs/remotes/gh/*'])
  const before = world.api.activity.at(-1)?.after ?? world.base
  const head = gitIn(ws, ['rev-parse', 'refs/remotes/gh/feature']).trim()
  const base = gitIn(ws, ['rev-parse', 'refs/remotes/gh/main']).trim()
  // GitHub's activity list: the opener pushed the pull request's branch.
  if (!world.api.activity.some((a) => a.after === head))
    world.api.recordPush('feature', before, head, PEOPLE.author, 'push')
  gitIn(ws, ['checkout', '-q', '--detach', base])
  gitIn(ws, ['merge', '-q', '--no-ff', '-m', `Merge ${head} into ${base}`, head])
  const merge = gitIn(ws, ['rev-parse', 'HEAD']).trim()
  gitIn(ws, [
    'push',
    '-q',
    '-f',
    remote,
    `${head}:refs/pull/${PR_NUMBER}/head`,
    `${merge}:refs/pull/${PR_NUMBER}/merge`
  ])
  return { head, base, merge }
}

/**
 * A world (makeWorld with `files` on main) whose pull request PR_NUMBER has a commit of its own
 * on `feature` while main moved on, pushed to GitHub's stand-in with the pull request's refs.
 */
export async function makePullRequestWorld(
  files: Parameters<typeof makeWorld>[0]
): Promise<{ world: World; refs: PullRefs }> {
  const world = await makeWorld(files)
  const ws = world.workspace
  gitIn(ws, ['checkout', '-q', 'feature'])
  fs.writeFileSync(path.join(ws, 'feature.txt'), 'from the pull request\n')
  gitIn(ws, ['add', 'feature.txt'])
  gitIn(ws, ['commit', '-q', '-m', 'feature work'])
  gitIn(ws, ['checkout', '-q', 'main'])
  fs.writeFileSync(path.join(ws, 'main.txt'), 'main moved on\n')
  gitIn(ws, ['add', 'main.txt'])
  gitIn(ws, ['commit', '-q', '-m', 'main work'])
  gitIn(ws, ['push', '-q', remoteOf(world), 'main', 'feature'])
  return { world, refs: updatePullRefs(world) }
}

/** The pull_request (synchronize) payload of PR_NUMBER at `refs`, from a fork when `fork`. */
export function pullRequestPayload(refs: PullRefs, fork: boolean): Record<string, unknown> {
  return webhook('pull_request', 'synchronize', (p) => {
    p.number = PR_NUMBER
    p.pull_request.number = PR_NUMBER
    p.pull_request.head.sha = refs.head
    p.pull_request.head.ref = 'feature'
    p.pull_request.head.repo.full_name = fork ? 'mallory/hello' : 'octo-org/hello'
    p.pull_request.base.sha = refs.base
    p.pull_request.base.ref = 'main'
    p.pull_request.base.repo.full_name = 'octo-org/hello'
    p.pull_request.user.login = PEOPLE.author.login
  })
}

/** The inputs this machine gives a run or plan step where the workflow leaves them empty. */
export function machineInputs(stage: ModelStage): NonNullable<RunnerSetup['machineInputs']> {
  return (step) =>
    step.with.mode !== 'run' && step.with.mode !== 'plan'
      ? {}
      : Object.fromEntries(
          Object.entries({
            'build-args': `BASE=${imageId('airlock-local/node:24-npm')}`,
            credentials:
              'ANTHROPIC=https://api.test:8443|AIRLOCK_AGENT_API_KEY|x-api-key|allow=POST /v1/messages',
            'host-map': `api.test=${stage.stubs.upstream.ip}`,
            'upstream-ca': stage.ca,
            'proxy-image': imageId('airlock-local/node:18'),
            'proxy-network': stage.stubs.network
          }).filter(([k]) => (step.with[k] ?? '') === '')
        )
}

/** The runner of one workflow run of the world's repository. */
export function runnerSetup(
  stage: ModelStage,
  world: World,
  run: { eventName: string; payload: Record<string, unknown>; sha: string; ref: string }
): RunnerSetup {
  return {
    remote: remoteOf(world),
    root: world.root,
    ...run,
    apiUrl: world.api.url,
    token: TOKEN,
    artifactEnv: stage.results.env,
    machineInputs: machineInputs(stage)
  }
}

/** A fresh run id, as GitHub numbers runs. */
export const newRunId = (): string => String(100000 + Math.floor(Math.random() * 899999))

/**
 * What a test watches of the called workflow's progress job (run next to the run job): the
 * check run as it was when the run job's step `step` had ended but was still in progress.
 */
export interface ProgressWatch {
  step: string
  /** The check run at that moment (undefined: it never named the step). */
  seen?: Pick<CheckRun, 'status' | 'details_url'> & { summary: string | null }
  /** The run job as the Actions API listed it then. */
  job?: WorkflowJob
}

/** The progress check run's name (src/github/progress.ts). */
export const PROGRESS_CHECK = 'Agent Airlock: running'

/**
 * The reusable workflow's jobs as GitHub runs them for one caller job: `progress` (with a token
 * of its own permissions, when `watch` is given) next to `run`, then `publish`. The Actions API
 * lists the run's jobs while they run.
 */
export async function calledRun(
  world: World,
  o: {
    caller: string
    call: ResolvedCall
    ctx: Contexts
    setup: RunnerSetup
    watch?: ProgressWatch
  }
): Promise<{ run: JobResult; publish: JobResult; progress?: JobResult; progressToken?: string }> {
  const inner: Contexts = { ...o.ctx, inputs: o.call.inputs, secrets: o.call.secrets }
  const runId = String(o.ctx.github.run_id)
  const jobs: WorkflowJob[] = []
  world.api.workflowJobs.set(runId, jobs)
  const watch = o.watch
  const setup: RunnerSetup = {
    ...o.setup,
    apiJobs: {
      list: jobs,
      caller: o.caller,
      beforeStepCompletes: async (job, step) => {
        if (watch === undefined || step !== watch.step || !job.name.endsWith(' / run')) return
        watch.job = structuredClone(job)
        const until = Date.now() + 60_000
        while (Date.now() < until) {
          const check = world.api.checkRuns.find((c) => c.name === PROGRESS_CHECK)
          if (check?.status === 'in_progress' && check.output.summary?.includes(step)) {
            watch.seen = {
              status: check.status,
              summary: check.output.summary,
              details_url: check.details_url
            }
            return
          }
          await new Promise((r) => setTimeout(r, 250))
        }
      }
    }
  }
  let progress: Promise<JobResult> | undefined
  let progressToken: string | undefined
  if (watch !== undefined) {
    // GitHub mints each job a token with the job's permissions.
    progressToken = `ghs_progress${randomBytes(14).toString('hex')}`
    world.api.tokens.set(progressToken, ACTIONS_BOT)
    world.api.tokenPermissions.set(progressToken, o.call.permissions.progress ?? {})
    progress = runJob(
      o.call.callee,
      'progress',
      { ...inner, github: { ...inner.github, token: progressToken } },
      setup
    )
  }
  const run = await runJob(o.call.callee, 'run', inner, setup)
  const needs = { run: { result: run.result, outputs: run.outputs } }
  const publish = await runJob(o.call.callee, 'publish', { ...inner, needs }, setup)
  return {
    run,
    publish,
    ...(progress !== undefined ? { progress: await progress, progressToken } : {})
  }
}

/** A file of a commit: text, or an executable script. */
type Files = Record<string, string | { content: string; exec: true }>

/** A commit of `files` on top of `parent` in the world's workspace (nothing checked out after). */
function commitOn(world: World, parent: string, files: Files, message: string): string {
  const ws = world.workspace
  gitIn(ws, ['checkout', '-q', '--detach', parent])
  for (const [name, spec] of Object.entries(files)) {
    const file = path.join(ws, name)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    if (typeof spec === 'string') fs.writeFileSync(file, spec)
    else fs.writeFileSync(file, spec.content, { mode: 0o755 })
    gitIn(ws, ['add', '--', name])
  }
  gitIn(ws, ['commit', '-q', '-m', message])
  return gitIn(ws, ['rev-parse', 'HEAD']).trim()
}

/** The fork's repository and the login of its owner (the pull request's author). */
export const FORK = { repo: 'mallory/hello', user: PEOPLE.mallory }

/**
 * An open pull request `number` from the fork FORK.repo: its head, a commit of `files` on the
 * base branch, exists in this repository only as GitHub keeps it, under refs/pull/<n>/head (no
 * branch of the repository has it). Returns the head commit.
 */
export function addForkPullRequest(world: World, number: number, files: Files): string {
  const main = world.api.git(['rev-parse', 'refs/heads/main']).trim()
  gitIn(world.workspace, ['fetch', '-q', remoteOf(world), 'main'])
  const head = commitOn(world, main, files, 'the fork’s change')
  gitIn(world.workspace, ['push', '-q', '-f', remoteOf(world), `${head}:refs/pull/${number}/head`])
  world.api.pulls.set(number, {
    number,
    user: FORK.user,
    headRef: 'patch-1',
    baseRef: 'main',
    headRepo: FORK.repo,
    state: 'open',
    draft: false,
    title: 'From a fork',
    body: '',
    foreignHeadSha: head
  })
  return head
}

/** The fork pushes `files` on top of its pull request's head: the head moves. */
export function forkPush(world: World, number: number, files: Files): string {
  const pull = world.api.pulls.get(number)
  if (pull?.foreignHeadSha === undefined) throw new Error(`pull request ${number} is not a fork's`)
  const head = commitOn(world, pull.foreignHeadSha, files, 'the fork pushes again')
  gitIn(world.workspace, ['push', '-q', '-f', remoteOf(world), `${head}:refs/pull/${number}/head`])
  pull.foreignHeadSha = head
  return head
}

/** The `issue_comment` (created) event of `user` commenting `body` on pull request `pull`. */
export function commentOn(user: User, body: string, pull: number): Record<string, unknown> {
  return webhook('issue_comment', 'created', (p) => {
    p.issue.number = pull
    p.issue.pull_request = { url: `https://api.github.com/repos/octo-org/hello/pulls/${pull}` }
    p.comment.body = body
    p.comment.created_at = new Date().toISOString()
    p.comment.updated_at = p.comment.created_at
    p.comment.user.login = user.login
    p.comment.user.type = user.type
  })
}

/**
 * examples/comment-run.yml on an `issue_comment` event, as shipped (the claude-code preset):
 * the command job, then (when it asks for a run) the called workflow's jobs. `between` runs after
 * the command job and before the run (what happens on GitHub while the run is queued).
 */
export async function commentRun(
  stage: ModelStage,
  world: World,
  event: Record<string, unknown>,
  o: {
    between?: () => void
    read?: ReadWorkflow
    /** Instead of the preset's machine inputs (a call that names no preset). */
    machineInputs?: RunnerSetup['machineInputs']
  } = {}
): Promise<{
  command: JobResult
  runId: string
  /** The called workflow's jobs, when the command job asked for a run. */
  run?: JobResult
  publish?: JobResult
  call?: ResolvedCall
}> {
  const runId = newRunId()
  const base = world.api.git(['rev-parse', 'refs/heads/main']).trim()
  const ctx: Contexts = {
    github: githubContext('issue_comment', event, {
      sha: base,
      ref: 'refs/heads/main',
      token: TOKEN,
      runId
    }),
    secrets: { ANTHROPIC_API_KEY: SECRET }
  }
  const w = await loadWorkflow('examples/comment-run.yml', o.read)
  const setup: RunnerSetup = {
    ...runnerSetup(stage, world, {
      eventName: 'issue_comment',
      payload: event,
      sha: base,
      ref: 'refs/heads/main'
    }),
    ...(o.machineInputs !== undefined ? { machineInputs: o.machineInputs } : {})
  }
  const command = await runJob(w, 'command', ctx, setup)
  const needs = { command: { result: command.result, outputs: command.outputs } }
  o.between?.()
  if (!jobRuns(w, 'airlock', { ...ctx, needs })) return { command, runId }
  const call = await resolveCall(w, 'airlock', { ...ctx, needs }, o.read)
  const jobs = await calledRun(world, { caller: 'airlock', call, ctx: { ...ctx, needs }, setup })
  return { command, ...jobs, runId, call }
}

/** examples/pull-request.yml on a pull_request event: the called workflow's jobs (calledRun). */
export async function pullRequestRun(
  stage: ModelStage,
  world: World,
  refs: PullRefs,
  opts: { fork?: boolean; read?: ReadWorkflow; watch?: ProgressWatch } = {}
) {
  const event = pullRequestPayload(refs, opts.fork === true)
  const runId = newRunId()
  const ctx: Contexts = {
    github: githubContext('pull_request', event, {
      sha: refs.merge,
      ref: `refs/pull/${PR_NUMBER}/merge`,
      token: TOKEN,
      runId
    }),
    secrets: { ANTHROPIC_API_KEY: SECRET }
  }
  const caller = await loadWorkflow('examples/pull-request.yml', opts.read)
  const call = await resolveCall(caller, 'airlock', ctx, opts.read)
  const setup = runnerSetup(stage, world, {
    eventName: 'pull_request',
    payload: event,
    sha: refs.merge,
    ref: `refs/pull/${PR_NUMBER}/merge`
  })
  const jobs = await calledRun(world, {
    caller: 'airlock',
    call,
    ctx,
    setup,
    ...(opts.watch !== undefined ? { watch: opts.watch } : {})
  })
  return { ...jobs, runId, call }
}

/**
 * examples/approve.yml on an issue comment `body` by `user` on pull request `pull`, run on the
 * default branch at `base`; the evidence it downloads is the artifact of run `runId`.
 */
export async function approveRun(
  stage: ModelStage,
  world: World,
  o: { user: User; body: string; runId: string; base: string; pull?: number; read?: ReadWorkflow }
): Promise<JobResult> {
  const pull = o.pull ?? PR_NUMBER
  const event = webhook('issue_comment', 'created', (p) => {
    p.issue.number = pull
    p.issue.pull_request = { url: `https://api.github.com/repos/octo-org/hello/pulls/${pull}` }
    p.comment.body = o.body
    p.comment.created_at = new Date().toISOString()
    p.comment.user.login = o.user.login
    p.comment.user.type = o.user.type
  })
  // issue_comment runs on the default branch.
  const ctx: Contexts = {
    github: githubContext('issue_comment', event, {
      sha: o.base,
      ref: 'refs/heads/main',
      token: TOKEN
    })
  }
  const call = await resolveCall(
    await loadWorkflow('examples/approve.yml', o.read),
    'approve',
    ctx,
    o.read
  )
  return runJob(
    call.callee,
    'approve',
    { ...ctx, inputs: call.inputs, secrets: call.secrets },
    {
      ...runnerSetup(stage, world, {
        eventName: 'issue_comment',
        payload: event,
        sha: o.base,
        ref: 'refs/heads/main'
      }),
      machineInputs: undefined,
      artifactRuns: { [o.runId]: stage.results.env }
    }
  )
}

/** The gate's states on `sha`, oldest first. */
export function gate(world: World, sha: string): string[] {
  return world.api.statuses
    .filter((s) => s.sha === sha && s.context === 'airlock/approval')
    .map((s) => s.state)
}

/** The end of a job's log (every step's output). */
export function jobLog(job: JobResult): string {
  return job.steps
    .map((s) => `${s.stdout}\n${s.stderr}`)
    .join('\n')
    .slice(-6000)
}
