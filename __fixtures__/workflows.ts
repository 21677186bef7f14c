/**
 * The workflow files as GitHub reads them: loaded with GitHub's own `@actions/workflow-parser`,
 * every `if:`, `with:` and `env:` evaluated with `@actions/expressions` against the contexts a run
 * has (github from a real webhook payload, inputs, secrets), and a reusable-workflow call resolved
 * to the callee in this repository with its inputs (defaults applied) and secrets.
 *
 * Plain Node refuses to load @actions/workflow-parser (it imports its JSON schema without an
 * import attribute), so it is bundled with esbuild once per process.
 */
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { pathToFileURL } from 'node:url'
import * as esbuild from 'esbuild'
import { Evaluator, Lexer, Parser, data } from '@actions/expressions'

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')

/* eslint-disable @typescript-eslint/no-explicit-any -- template tokens of a bundled module */
type Token = any
interface WorkflowParser {
  parseWorkflow(
    file: { name: string; content: string },
    trace: unknown
  ): { value: Token; context: Token }
  convertWorkflowTemplate(context: Token, value: Token): Promise<Token>
  NoOperationTraceWriter: new () => unknown
}
/* eslint-enable @typescript-eslint/no-explicit-any */

let parser: Promise<WorkflowParser> | undefined

function loadParser(): Promise<WorkflowParser> {
  parser ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-workflow-parser-'))
    const entry = path.join(dir, 'entry.mjs')
    const out = path.join(dir, 'workflow-parser.mjs')
    fs.writeFileSync(
      entry,
      "export { parseWorkflow, convertWorkflowTemplate, NoOperationTraceWriter } from '@actions/workflow-parser'\n"
    )
    await esbuild.build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: out,
      nodePaths: [path.join(ROOT, 'node_modules')],
      banner: {
        js: "import { createRequire as __airlockRequire } from 'node:module'; const require = __airlockRequire(import.meta.url);"
      },
      logLevel: 'error'
    })
    return (await import(pathToFileURL(out).href)) as WorkflowParser
  })()
  return parser
}

export interface LoadedWorkflow {
  file: string
  /** The raw template tokens (steps' `with:` lives only here). */
  raw: Token
  /** The converted model: events, jobs (with `type: reusableWorkflowJob`, `ref`, input values). */
  template: Token
  /**
   * A called workflow's identity as its jobs see it in the `job` context (job.workflow_ref,
   * job.workflow_sha, job.workflow_repository, job.workflow_file_path): the file, repository and
   * commit the caller's `uses:` resolved to.
   */
  job?: Record<string, string>
}

/** Reads a workflow file of this repository (tests may hand in a changed text instead). */
export type ReadWorkflow = (file: string) => string
const readFromRepo: ReadWorkflow = (file) => fs.readFileSync(path.resolve(ROOT, file), 'utf8')

export async function loadWorkflow(
  file: string,
  read: ReadWorkflow = readFromRepo
): Promise<LoadedWorkflow> {
  const wp = await loadParser()
  const content = read(file)
  const parsed = wp.parseWorkflow(
    { name: path.basename(file), content },
    new wp.NoOperationTraceWriter()
  )
  const errors = parsed.context.errors.getErrors() as { message: string }[]
  if (errors.length > 0) throw new Error(`${file}: ${errors.map((e) => e.message).join('; ')}`)
  const template = await wp.convertWorkflowTemplate(parsed.context, parsed.value)
  if (template.errors?.length) {
    throw new Error(
      `${file}: ${template.errors.map((e: { Message: string }) => e.Message).join('; ')}`
    )
  }
  return { file, raw: parsed.value, template }
}

/** The contexts an expression sees. */
export interface Contexts {
  github: Record<string, unknown>
  inputs?: Record<string, unknown>
  secrets?: Record<string, string>
  needs?: Record<string, unknown>
  vars?: Record<string, string>
  env?: Record<string, string>
  /** Outputs of the steps run so far: `steps.<id>.outputs`. */
  steps?: Record<string, { outputs: Record<string, string>; outcome?: string; conclusion?: string }>
  /** Whether the run was cancelled (the status functions). */
  cancelled?: boolean
  /** The runner context (the job's temp folder: `runner.temp`). */
  runner?: { os: string; temp: string }
  /** The job context (a called workflow's identity: see LoadedWorkflow.job). */
  job?: Record<string, unknown>
  /** The matrix context of one job of a matrix. */
  matrix?: Record<string, unknown>
}

/** The contexts a job of `w` sees: a called workflow's jobs get its identity in `job`. */
const withJob = (w: LoadedWorkflow, ctx: Contexts): Contexts =>
  w.job !== undefined && ctx.job === undefined ? { ...ctx, job: w.job } : ctx

const STATUS_FUNCTIONS = ['success', 'always', 'cancelled', 'failure']
const status = (name: string, value: boolean) => ({
  name,
  minArgs: 0,
  maxArgs: 0,
  call: () => new data.BooleanData(value)
})

/** Evaluates `${{ … }}` (the text inside) with GitHub's evaluator; returns plain JSON. */
export function evaluate(expression: string, ctx: Contexts): unknown {
  const names = [
    'github',
    'inputs',
    'secrets',
    'needs',
    'vars',
    'env',
    'steps',
    'job',
    'runner',
    'matrix',
    'strategy'
  ]
  const lexed = new Lexer(expression).lex()
  const cancelled = ctx.cancelled === true
  const values: Record<string, boolean> = {
    success: !cancelled,
    always: true,
    cancelled,
    failure: false
  }
  const functions = STATUS_FUNCTIONS.map((n) => status(n, values[n]))
  const expr = new Parser(lexed.tokens, names, functions).parse()
  const context = JSON.parse(
    JSON.stringify({
      github: ctx.github,
      inputs: ctx.inputs ?? {},
      secrets: ctx.secrets ?? {},
      needs: ctx.needs ?? {},
      vars: ctx.vars ?? {},
      env: ctx.env ?? {},
      steps: ctx.steps ?? {},
      job: ctx.job ?? {},
      runner: ctx.runner ?? { os: 'Linux', temp: '/home/runner/work/_temp' },
      matrix: ctx.matrix ?? {},
      strategy: {}
    }),
    data.reviver
  ) as data.Dictionary
  const result = new Evaluator(
    expr,
    context,
    new Map(functions.map((f) => [f.name.toLowerCase(), f]))
  ).evaluate()
  return JSON.parse(JSON.stringify(result, data.replacer)) as unknown
}

/** A template token's value: a literal, or an expression evaluated. */
export function valueOf(token: Token, ctx: Contexts): unknown {
  if (token === undefined || token === null) return undefined
  if (typeof token.expression === 'string') return evaluate(token.expression, ctx)
  if (Array.isArray(token.map)) return mapping(token, ctx)
  if (Array.isArray(token.seq)) return token.seq.map((t: Token) => valueOf(t, ctx))
  return token.value
}

/** A mapping token, each value evaluated; `${{ }}` results coerced to strings as step inputs are. */
export function mapping(token: Token, ctx: Contexts): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const p of token?.map ?? []) out[p.key.value as string] = valueOf(p.value, ctx)
  return out
}

/** How the runner turns a value into an input or variable string. */
export function asString(v: unknown): string {
  if (v === undefined || v === null) return ''
  if (typeof v === 'boolean' || typeof v === 'number') return String(v)
  if (typeof v === 'string') return v
  return JSON.stringify(v)
}

function get(token: Token, key: string): Token {
  return token?.map?.find((p: Token) => p.key.value === key)?.value
}

/** `if:` of a job (GitHub adds `success() &&` when it names no status function). */
export function jobRuns(w: LoadedWorkflow, jobId: string, given: Contexts): boolean {
  const ctx = withJob(w, given)
  const job = w.template.jobs.find((j: Token) => j.id.value === jobId)
  if (!job) throw new Error(`${w.file}: no job ${jobId}`)
  return job.if === undefined ? true : Boolean(valueOf(job.if, ctx))
}

export interface EvaluatedStep {
  index: number
  id?: string
  /** The step's `name:` (not evaluated: the workflows' names are plain text). */
  name?: string
  uses?: string
  run?: string
  runs: boolean
  /** `continue-on-error:` evaluated: a failure of this step does not fail the job. */
  continueOnError: boolean
  with: Record<string, string>
  env: Record<string, string>
}

/** A job's `environment:` name, evaluated (GitHub ignores an empty name). */
export function jobEnvironment(
  w: LoadedWorkflow,
  jobId: string,
  given: Contexts
): string | undefined {
  const ctx = withJob(w, given)
  const env = get(get(get(w.raw, 'jobs'), jobId), 'environment')
  if (env === undefined) return undefined
  const v = env.map ? valueOf(get(env, 'name'), ctx) : valueOf(env, ctx)
  const name = asString(v)
  return name === '' ? undefined : name
}

/** A job's `outputs:` evaluated (after its steps ran: `ctx.steps`). */
export function jobOutputs(
  w: LoadedWorkflow,
  jobId: string,
  given: Contexts
): Record<string, string> {
  const ctx = withJob(w, given)
  const rawJob = get(get(w.raw, 'jobs'), jobId)
  const out = mapping(get(rawJob, 'outputs'), ctx)
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, asString(v)]))
}

/** Every step of a job with its `if:`, `with:` and `env:` evaluated (job-level env merged). */
export function jobSteps(w: LoadedWorkflow, jobId: string, given: Contexts): EvaluatedStep[] {
  const ctx = withJob(w, given)
  const rawJob = get(get(w.raw, 'jobs'), jobId)
  const jobEnv = mapping(get(rawJob, 'env'), ctx)
  return (get(rawJob, 'steps')?.seq ?? []).map((s: Token, index: number) => {
    const ifToken = get(s, 'if')
    const env = { ...jobEnv, ...mapping(get(s, 'env'), ctx) }
    const stringEnv = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, asString(v)]))
    const withValues = mapping(get(s, 'with'), { ...ctx, env: { ...ctx.env, ...stringEnv } })
    // A step's `if:` sees the job's env (not its own step env).
    const ifCtx: Contexts = {
      ...ctx,
      env: {
        ...ctx.env,
        ...Object.fromEntries(Object.entries(jobEnv).map(([k, v]) => [k, asString(v)]))
      }
    }
    const continueToken = get(s, 'continue-on-error')
    return {
      index,
      continueOnError:
        continueToken === undefined ? false : asString(valueOf(continueToken, ctx)) === 'true',
      id: get(s, 'id')?.value as string | undefined,
      name: get(s, 'name')?.value as string | undefined,
      uses: get(s, 'uses')?.value as string | undefined,
      run: get(s, 'run')?.value as string | undefined,
      runs:
        ifToken === undefined
          ? true
          : Boolean(
              typeof ifToken.expression === 'string' || typeof ifToken.value !== 'string'
                ? valueOf(ifToken, ifCtx)
                : evaluate(ifToken.value as string, ifCtx)
            ),
      with: Object.fromEntries(Object.entries(withValues).map(([k, v]) => [k, asString(v)])),
      env: stringEnv
    }
  })
}

/** A token's permissions, scope → read | write (a scope not named is none). */
export type Permissions = Record<string, 'read' | 'write'>

const LEVEL = { none: 0, read: 1, write: 2 } as const

/** A `permissions:` value as GitHub reads it ({} or a mapping; read-all / write-all). */
function readPermissions(token: Token): Permissions | undefined {
  if (token === undefined) return undefined
  if (token.value === 'read-all' || token.value === 'write-all') {
    const level = token.value === 'read-all' ? 'read' : 'write'
    return Object.fromEntries(
      ['actions', 'attestations', 'checks', 'contents', 'deployments', 'id-token', 'issues']
        .concat(['packages', 'pages', 'pull-requests', 'security-events', 'statuses'])
        .map((k) => [k, level])
    ) as Permissions
  }
  const out: Permissions = {}
  for (const p of token.map ?? []) {
    const v = p.value.value as string
    if (v === 'read' || v === 'write') out[p.key.value as string] = v
  }
  return out
}

export interface ResolvedCall {
  callee: LoadedWorkflow
  /**
   * Each job's token permissions as GitHub computes them for a called workflow: the job's own
   * `permissions:`, else the callee's top-level ones, else the calling job's grant. A job (or
   * the callee) asking for more than the caller grants is the startup error GitHub reports.
   */
  permissions: Record<string, Permissions>
  /** The callee's `inputs` context: the caller's values, the callee's defaults for the rest. */
  inputs: Record<string, unknown>
  secrets: Record<string, string>
}

/**
 * A job that calls `OWNER/REPO/.github/workflows/X.yml@SHA` (or `./.github/workflows/X.yml`):
 * the callee read from this repository, its inputs and secrets as the call gives them.
 */
export async function resolveCall(
  caller: LoadedWorkflow,
  jobId: string,
  ctx: Contexts,
  read: ReadWorkflow = readFromRepo
): Promise<ResolvedCall> {
  const job = caller.template.jobs.find((j: Token) => j.id.value === jobId)
  if (!job || job.type !== 'reusableWorkflowJob')
    throw new Error(`${caller.file}: ${jobId} calls no workflow`)
  const ref = job.ref.value as string
  // A call of this repository's workflow: local (./), pinned by a full SHA, or by a release tag.
  const m =
    /^(?:\.\/|([^/]+\/[^/]+)\/)(\.github\/workflows\/[^@]+\.ya?ml)(?:@([0-9a-f]{40}|v\d+(?:\.\d+){0,2}))?$/.exec(
      ref
    )
  if (!m)
    throw new Error(`${caller.file}: ${ref} is not a pinned call of a workflow of this repository`)
  const [, owner, file, at] = m
  const callee = { ...(await loadWorkflow(file, read)) }
  // What GitHub puts in the called workflow's job context: its own repository and the commit the
  // caller's ref resolved to (a release tag resolves to the commit it names: here, this checkout's).
  const repository = owner ?? String(ctx.github.repository)
  const sha =
    at === undefined
      ? String(ctx.github.sha)
      : /^[0-9a-f]{40}$/.test(at)
        ? at
        : execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT }).toString().trim()
  callee.job = {
    workflow_ref: `${repository}/${file}@${at === undefined ? String(ctx.github.ref) : /^v/.test(at) ? `refs/tags/${at}` : at}`,
    workflow_sha: sha,
    workflow_repository: repository,
    workflow_file_path: file
  }
  const defs = (callee.template.events.workflow_call?.inputs ?? {}) as Record<
    string,
    { type: string; default?: unknown; required?: boolean }
  >
  const given = mapping(job['input-values'], ctx)
  const inputs: Record<string, unknown> = {}
  for (const [name, def] of Object.entries(defs)) {
    const v = name in given ? given[name] : def.default
    if (v === undefined && def.required === true)
      throw new Error(`${ref}: input ${name} is required`)
    inputs[name] =
      def.type === 'boolean'
        ? v === true || v === 'true'
        : def.type === 'number'
          ? Number(v)
          : (v ?? '')
  }
  for (const name of Object.keys(given)) {
    if (!(name in defs))
      throw new Error(`${caller.file}: ${jobId} gives ${name}, which ${file} does not declare`)
  }
  const secretValues = mapping(job['secret-values'], ctx)
  const secrets: Record<string, string> =
    job['inherit-secrets'] === true ? { ...(ctx.secrets ?? {}) } : {}
  for (const [k, v] of Object.entries(secretValues)) secrets[k] = asString(v)
  const rawCaller = get(get(caller.raw, 'jobs'), jobId)
  const grant =
    readPermissions(get(rawCaller, 'permissions')) ??
    readPermissions(get(caller.raw, 'permissions')) ??
    {}
  const top = readPermissions(get(callee.raw, 'permissions'))
  const permissions: Record<string, Permissions> = {}
  for (const p of get(callee.raw, 'jobs')?.map ?? []) {
    const id = p.key.value as string
    const asked = readPermissions(get(p.value, 'permissions')) ?? top ?? grant
    for (const [scope, level] of Object.entries(asked)) {
      const allowed = grant[scope] ?? 'none'
      if (LEVEL[level] > LEVEL[allowed])
        throw new Error(
          `${caller.file}: calling ${file}: the nested job '${id}' is requesting '${scope}: ${level}', but is only allowed '${scope}: ${allowed}'`
        )
    }
    permissions[id] = asked
  }
  return { callee, inputs, secrets, permissions }
}

/**
 * The github context of a run of `eventName` with `payload` (a real webhook example), as the
 * runner has it: for pull_request, `sha` is the merge commit and `ref` refs/pull/N/merge.
 */
export function githubContext(
  eventName: string,
  payload: Record<string, unknown>,
  run: {
    sha: string
    ref: string
    repository?: string
    actor?: string
    token?: string
    runId?: string
  }
): Record<string, unknown> {
  const repository = run.repository ?? 'octo-org/hello'
  return {
    event_name: eventName,
    event: payload,
    sha: run.sha,
    ref: run.ref,
    ref_name: run.ref.replace(/^refs\/(heads|tags)\//, ''),
    repository,
    repository_owner: repository.split('/')[0],
    actor: run.actor ?? 'pr-author',
    token: run.token ?? 'ghs_runtoken',
    run_id: run.runId ?? '4242',
    run_attempt: '1',
    server_url: 'https://github.com',
    api_url: 'https://api.github.com',
    workspace: '/home/runner/work/hello/hello'
  }
}
