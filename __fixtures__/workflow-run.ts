/**
 * Runs a job of a workflow file the way the Actions runner does, on this machine: each step's
 * `if:`, `with:` and `env:` evaluated with GitHub's evaluator (./workflows.ts), `run:` steps in
 * bash, `uses: ./…` steps from the action's built dist/ (INPUT_*, GITHUB_* of the event,
 * GITHUB_OUTPUT/GITHUB_STATE files, then the post step), and the two actions the workflows use
 * emulated for the inputs they pass:
 *   actions/checkout           the repository (a local "GitHub" remote that has
 *                              refs/pull/N/merge and refs/pull/N/head) at `ref` (default: the
 *                              event's GITHUB_SHA), `fetch-depth` commits (0: all), into `path`;
 *                              `persist-credentials` writes the token header into .git/config
 *                              as the real action does; `repository:` another repository (Agent
 *                              Airlock itself) is this project folder, as pinned by the caller.
 *                              A `repository:` the test registers (the repository itself, a
 *                              fork) is fetched from its own local remote instead.
 *   actions/download-artifact  the real @actions/artifact client against the results stand-in;
 *                              with `run-id` (another run's artifact, which the real action
 *                              reads through the REST API and so needs `github-token`), the
 *                              results stand-in of that run.
 *   actions/create-github-app-token  checks `client-id` and `private-key` against an App the
 *                              test registers, and its `permission-*` inputs against what the
 *                              App was granted (GitHub's 422 for more), and answers its outputs: `token` (an installation
 *                              token the API stand-in knows as `<slug>[bot]`), `app-slug`,
 *                              `installation-id`.
 * A `uses: ./…` step gets its inputs as the runner gives them: every `action.yml` default
 * (expressions evaluated), then the step's `with:` values (actionInputs).
 * With `apiJobs`, the job is what the Actions API lists for the run while it runs (`GET
 * /actions/runs/{run_id}/jobs`): added in progress when it starts, each step in progress when it
 * starts and completed when it ends, the job completed with its conclusion at its end.
 */
import { spawn, execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { DefaultArtifactClient } from '@actions/artifact'
import YAML from 'yaml'
import { NODE } from './action-harness.js'
import { GitHubStandIn } from './github-stand-in.js'
import type { WorkflowJob } from './github-stand-in.js'
import {
  ROOT,
  asString,
  evaluate,
  jobEnvironment,
  jobOutputs,
  jobRuns,
  jobSteps,
  type Contexts,
  type EvaluatedStep,
  type LoadedWorkflow,
  type Permissions
} from './workflows.js'
import { refusedAppPermissions } from './github-rules.js'

export interface RunnerSetup {
  /** The local stand-in of the GitHub repository (a bare git repository). */
  remote: string
  /** Where the job's workspace is made (a fresh folder per job). */
  root: string
  eventName: string
  payload: Record<string, unknown>
  /** GITHUB_SHA and GITHUB_REF of the run (the merge commit and refs/pull/N/merge on pull_request). */
  sha: string
  ref: string
  apiUrl: string
  /** The job's GITHUB_TOKEN. */
  token: string
  /** Artifact service environment (results stand-in). */
  artifactEnv: Record<string, string>
  /** Settings this machine needs that a hosted runner has from the internet (see the tests). */
  machineInputs?: (step: EvaluatedStep) => Record<string, string>
  /** Other repositories checkout can fetch (full name → local bare remote). */
  repositories?: Record<string, string>
  /** Artifact service environments of other runs, by run id (download-artifact `run-id`). */
  artifactRuns?: Record<string, Record<string, string>>
  /** Variables a step of this machine needs that a hosted runner does not (a stand-in's address). */
  machineEnv?: Record<string, string>
  /**
   * Emulations of third-party actions a test provides, for the inputs its workflow uses: called
   * for every `uses:` step first; undefined leaves the step to the emulations above.
   */
  emulate?: (
    step: EvaluatedStep,
    io: { workspace: string; outputFile: string; env: Record<string, string> }
  ) => Promise<{ code: number; stdout?: string; stderr?: string } | undefined>
  /** GitHub Apps whose installation token create-github-app-token mints, by client id. */
  apps?: Record<
    string,
    {
      privateKey: string
      slug: string
      token: string
      installationId: string
      /**
       * What the App was granted on this installation: a `permission-<name>` input asking for
       * more is refused as GitHub refuses it (422). Unset: the App was granted everything asked.
       */
      permissions?: Permissions
    }
  >
  /** The run's jobs as the Actions API lists them (the stand-in's `workflowJobs` of the run). */
  apiJobs?: {
    list: WorkflowJob[]
    /** The calling job's id: a called workflow's job is listed as `<caller> / <job>`. */
    caller?: string
    /**
     * Called when a step's process has ended, before the API shows the step completed (on GitHub
     * the API lags the runner too): a test looks at the run while the step is still in progress.
     */
    beforeStepCompletes?: (job: WorkflowJob, step: string) => Promise<void>
  }
}

/** The name GitHub shows for a step: its `name:`, else `Run <uses or the command's first line>`. */
function stepName(step: EvaluatedStep): string {
  if (step.name !== undefined && step.name !== '') return step.name
  return `Run ${step.uses ?? (step.run ?? '').trim().split('\n')[0]}`
}

export interface StepResult {
  step: EvaluatedStep
  skipped: boolean
  code: number | null
  stdout: string
  stderr: string
  outputs: Record<string, string>
  /** The environment the step's process had (for the secret checks). */
  environment: Record<string, string>
  inputs: Record<string, string>
}

export interface JobResult {
  ran: boolean
  /** The deployment environment the job waits on (its required reviewers approve it here). */
  environment?: string
  result: 'success' | 'failure' | 'skipped'
  outputs: Record<string, string>
  steps: StepResult[]
  workspace: string
}

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }
  }).toString('utf8')
}

function parseFileCommands(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const m = /^([^<=]+)<<(.+)$/.exec(lines[i])
    if (m) {
      const value: string[] = []
      for (i++; i < lines.length && lines[i] !== m[2]; i++) value.push(lines[i])
      out[m[1]] = value.join('\n')
    } else if (lines[i].includes('=')) {
      out[lines[i].slice(0, lines[i].indexOf('='))] = lines[i].slice(lines[i].indexOf('=') + 1)
    }
  }
  return out
}

function spawnStep(
  cmd: string,
  args: string[],
  env: Record<string, string>,
  cwd: string
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { env, cwd })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')))
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/**
 * The inputs the runner hands a `uses:` action: every input `action.yml` declares with a
 * `default:` (expressions in it, such as `${{ github.token }}`, evaluated), then the step's
 * `with:` values over them. Whether the step gave a value or the default applied, the action sees
 * the same `INPUT_*` variable.
 */
export function actionInputs(
  actionDir: string,
  given: Record<string, string>,
  ctx: Contexts
): Record<string, string> {
  const manifest = YAML.parse(fs.readFileSync(path.join(actionDir, 'action.yml'), 'utf8')) as {
    inputs?: Record<string, { default?: unknown }>
  }
  const defaults: Record<string, string> = {}
  for (const [name, def] of Object.entries(manifest.inputs ?? {})) {
    if (def?.default === undefined || def.default === null) continue
    defaults[name] = asString(def.default).replace(/\$\{\{(.*?)\}\}/g, (_, expr: string) =>
      asString(evaluate(expr, ctx))
    )
  }
  return { ...defaults, ...given }
}

/** actions/checkout for the inputs the workflows use. */
function checkout(step: EvaluatedStep, setup: RunnerSetup, workspace: string): void {
  const w = step.with
  const dest = path.join(workspace, w.path ?? '')
  const own =
    w.repository === undefined || w.repository === ''
      ? undefined
      : setup.repositories?.[w.repository]
  if (w.repository !== undefined && w.repository !== '' && own === undefined) {
    // Agent Airlock itself at the pinned commit: this project (its action.yml, dist/, images/,
    // scripts/).
    // Pinned by a full SHA, or by a release tag (v1: here, this checkout stands for that release).
    if (!/^([0-9a-f]{40}|v\d+(\.\d+){0,2})$/.test(w.ref ?? ''))
      throw new Error(`checkout of ${w.repository} is not pinned`)
    fs.mkdirSync(dest, { recursive: true })
    for (const name of ['action.yml', 'dist', 'images', 'scripts']) {
      fs.cpSync(path.join(ROOT, name), path.join(dest, name), { recursive: true })
    }
    return
  }
  const ref = w.ref !== undefined && w.ref !== '' ? w.ref : setup.sha
  const depth = Number(w['fetch-depth'] ?? '1')
  fs.mkdirSync(dest, { recursive: true })
  git(dest, ['init', '-q'])
  git(dest, ['remote', 'add', 'origin', own ?? setup.remote])
  // As the action does: fetch the commit (with its history when fetch-depth is 0), check it out detached.
  git(dest, [
    'fetch',
    '-q',
    ...(depth > 0 ? [`--depth=${depth}`] : []),
    'origin',
    '+refs/heads/*:refs/remotes/origin/*',
    '+refs/pull/*:refs/remotes/pull/*'
  ])
  if (w['sparse-checkout'] !== undefined && w['sparse-checkout'] !== '') {
    // As the action does: the patterns (cone mode unless turned off) before the checkout.
    const cone = w['sparse-checkout-cone-mode'] !== 'false'
    git(dest, [
      'sparse-checkout',
      'set',
      cone ? '--cone' : '--no-cone',
      ...w['sparse-checkout'].split('\n').filter((l) => l.trim() !== '')
    ])
  }
  git(dest, ['-c', 'advice.detachedHead=false', 'checkout', '-q', '--detach', ref])
  if (w['persist-credentials'] !== 'false') {
    const basic = Buffer.from(`x-access-token:${setup.token}`).toString('base64')
    git(dest, [
      'config',
      '--local',
      'http.https://github.com/.extraheader',
      `AUTHORIZATION: basic ${basic}`
    ])
  }
}

/** actions/download-artifact by name, with the real client. */
async function downloadArtifact(
  step: EvaluatedStep,
  setup: RunnerSetup,
  workspace: string
): Promise<void> {
  const runId = step.with['run-id'] ?? ''
  let env = setup.artifactEnv
  if (runId !== '') {
    // The real action reads another run's artifacts through the REST API: it needs a token.
    if ((step.with['github-token'] ?? '') === '')
      throw new Error('download-artifact: run-id without github-token')
    const other = setup.artifactRuns?.[runId]
    if (other === undefined) throw new Error(`download-artifact: no run ${runId}`)
    env = other
  }
  const saved = { ...process.env }
  Object.assign(process.env, env)
  try {
    const client = new DefaultArtifactClient()
    const { artifact } = await client.getArtifact(step.with.name)
    await client.downloadArtifact(artifact.id, {
      path: path.resolve(workspace, step.with.path ?? '')
    })
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
    Object.assign(process.env, saved)
  }
}

/** An emulated action's step: an error it throws is the step failing with that message. */
async function emulated(
  action: () => void | Promise<void>
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    await action()
    return { code: 0, stdout: '', stderr: '' }
  } catch (error) {
    return { code: 1, stdout: '', stderr: `::error::${(error as Error).message}` }
  }
}

/** Runs one job; `ctx` holds github, inputs, secrets and needs. */
export async function runJob(
  w: LoadedWorkflow,
  jobId: string,
  ctx: Contexts,
  setup: RunnerSetup
): Promise<JobResult> {
  const workspace = fs.mkdtempSync(path.join(setup.root, `${jobId}-`))
  if (!jobRuns(w, jobId, ctx))
    return { ran: false, result: 'skipped', outputs: {}, steps: [], workspace }
  const environment = jobEnvironment(w, jobId, ctx)
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-runner-temp-'))
  const eventPath = path.join(temp, 'event.json')
  fs.writeFileSync(eventPath, JSON.stringify(setup.payload))
  // The comment or review the event announces exists on GitHub before the event is delivered.
  GitHubStandIn.at(setup.apiUrl)?.deliver(setup.eventName, setup.payload)
  const steps: StepResult[] = []
  const stepsCtx: NonNullable<Contexts['steps']> = {}
  let failed = false
  const runner = { os: 'Linux', temp }
  const evaluated = (): EvaluatedStep[] => jobSteps(w, jobId, { ...ctx, runner, steps: stepsCtx })
  const count = evaluated().length
  const apiJob: WorkflowJob | undefined =
    setup.apiJobs === undefined
      ? undefined
      : {
          id: 90_000 + setup.apiJobs.list.length,
          name: setup.apiJobs.caller !== undefined ? `${setup.apiJobs.caller} / ${jobId}` : jobId,
          status: 'in_progress',
          conclusion: null,
          started_at: new Date().toISOString(),
          steps: [
            { name: 'Set up job', status: 'completed', number: 1 },
            ...evaluated().map((s, n) => ({
              name: stepName(s),
              status: 'queued' as const,
              number: n + 2
            })),
            { name: 'Complete job', status: 'queued', number: count + 2 }
          ]
        }
  if (apiJob !== undefined) setup.apiJobs?.list.push(apiJob)
  for (let i = 0; i < count; i++) {
    const step = evaluated()[i]
    const apiStep = apiJob?.steps[i + 1]
    if (apiStep !== undefined) apiStep.status = 'in_progress'
    if (failed || !step.runs) {
      if (apiStep !== undefined) apiStep.status = 'completed'
      if (step.id !== undefined)
        stepsCtx[step.id] = { outputs: {}, outcome: 'skipped', conclusion: 'skipped' }
      steps.push({
        step,
        skipped: true,
        code: null,
        stdout: '',
        stderr: '',
        outputs: {},
        environment: {},
        inputs: {}
      })
      continue
    }
    const outputFile = path.join(temp, `output-${i}`)
    const stateFile = path.join(temp, `state-${i}`)
    const summaryFile = path.join(temp, `summary-${i}`)
    for (const f of [outputFile, stateFile, summaryFile]) fs.writeFileSync(f, '')
    const runnerEnv: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: temp,
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: workspace,
      GITHUB_EVENT_NAME: setup.eventName,
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_SHA: setup.sha,
      GITHUB_REF: setup.ref,
      GITHUB_REF_NAME: setup.ref.replace(/^refs\/(heads|tags)\//, ''),
      GITHUB_REPOSITORY: String(ctx.github.repository),
      GITHUB_API_URL: setup.apiUrl,
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_RUN_ID: String(ctx.github.run_id),
      GITHUB_RUN_ATTEMPT: String(ctx.github.run_attempt),
      GITHUB_JOB: jobId,
      GITHUB_OUTPUT: outputFile,
      GITHUB_STATE: stateFile,
      GITHUB_STEP_SUMMARY: summaryFile,
      RUNNER_TEMP: temp,
      ...setup.artifactEnv,
      ...setup.machineEnv,
      ...step.env
    }
    let result = { code: 0 as number | null, stdout: '', stderr: '' }
    let inputs: Record<string, string> = {}
    const byTest =
      step.uses !== undefined && setup.emulate !== undefined
        ? await setup.emulate(step, { workspace, outputFile, env: runnerEnv })
        : undefined
    if (byTest !== undefined) {
      result = { code: byTest.code, stdout: byTest.stdout ?? '', stderr: byTest.stderr ?? '' }
      inputs = { ...step.with }
    } else if (step.run !== undefined) {
      result = await spawnStep('bash', ['-e', '-c', step.run], runnerEnv, workspace)
    } else if (step.uses?.startsWith('actions/checkout@')) {
      result = await emulated(() => checkout(step, setup, workspace))
    } else if (step.uses?.startsWith('actions/download-artifact@')) {
      result = await emulated(() => downloadArtifact(step, setup, workspace))
    } else if (step.uses?.startsWith('actions/create-github-app-token@')) {
      const app = setup.apps?.[step.with['client-id'] ?? '']
      const refused =
        app?.permissions !== undefined
          ? refusedAppPermissions(app.permissions, step.with)
          : undefined
      if (app === undefined || app.privateKey !== step.with['private-key']) {
        result = {
          code: 1,
          stdout: '',
          stderr: '::error::no GitHub App with this client id and key'
        }
      } else if (refused !== undefined) {
        result = { code: 1, stdout: '', stderr: `::error::${refused}` }
      } else {
        fs.appendFileSync(
          outputFile,
          `token=${app.token}\napp-slug=${app.slug}\ninstallation-id=${app.installationId}\n`
        )
        inputs = { ...step.with }
      }
    } else if (step.uses?.startsWith('./')) {
      const dir = path.join(workspace, step.uses)
      inputs = {
        ...actionInputs(dir, step.with, { ...ctx, runner, steps: stepsCtx }),
        ...(setup.machineInputs?.(step) ?? {})
      }
      const env = { ...runnerEnv }
      for (const [k, v] of Object.entries(inputs))
        env[`INPUT_${k.replace(/ /g, '_').toUpperCase()}`] = v
      result = await spawnStep(NODE, [path.join(dir, 'dist/index.js')], env, workspace)
      // The post step (post-if: always()), with the state the main step saved.
      const state = parseFileCommands(fs.readFileSync(stateFile, 'utf8'))
      const postEnv = { ...env }
      for (const [k, v] of Object.entries(state)) postEnv[`STATE_${k}`] = v
      const post = await spawnStep(NODE, [path.join(dir, 'dist/post.js')], postEnv, workspace)
      result.stdout += post.stdout
      result.stderr += post.stderr
    } else {
      throw new Error(`${w.file}:${jobId}: no emulation of ${step.uses}`)
    }
    const outputs = parseFileCommands(fs.readFileSync(outputFile, 'utf8'))
    if (apiJob !== undefined && apiStep !== undefined) {
      await setup.apiJobs?.beforeStepCompletes?.(apiJob, apiStep.name)
      apiStep.status = 'completed'
    }
    const outcome = result.code === 0 ? 'success' : 'failure'
    if (step.id !== undefined)
      stepsCtx[step.id] = {
        outputs,
        outcome,
        conclusion: step.continueOnError ? 'success' : outcome
      }
    if (result.code !== 0 && !step.continueOnError) failed = true
    steps.push({ step, skipped: false, ...result, outputs, environment: runnerEnv, inputs })
  }
  fs.rmSync(temp, { recursive: true, force: true })
  if (apiJob !== undefined) {
    for (const s of apiJob.steps) s.status = 'completed'
    apiJob.conclusion = failed ? 'failure' : 'success'
    apiJob.status = 'completed'
  }
  return {
    ran: true,
    ...(environment !== undefined ? { environment } : {}),
    result: failed ? 'failure' : 'success',
    outputs: jobOutputs(w, jobId, { ...ctx, runner, steps: stepsCtx }),
    steps,
    workspace
  }
}
