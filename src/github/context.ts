import * as fs from 'node:fs'
import { ConfigurationError } from '../errors.js'
import { bool, list } from '../input-read.js'
import type { InputReader } from '../input-read.js'
import { boundedReader } from '../input-bounds.js'
import type { Outcome } from '../report/report.js'
import { OUTCOMES } from './evidence.js'
import { APP_SLUG } from './writes.js'

/** Input names of the GitHub modes (publish, approve, apply, and run's publishing step). */
export const GITHUB_INPUT = {
  mode: 'mode',
  githubToken: 'github-token',
  outputDir: 'output-dir',
  path: 'path',
  gateContext: 'gate-context',
  failOutcomes: 'fail-outcomes',
  allowSelfApproval: 'allow-self-approval',
  publish: 'publish',
  dryRun: 'dry-run',
  pullRequest: 'pull-request',
  branch: 'branch',
  base: 'base',
  appSlug: 'app-slug'
} as const

export const GITHUB_OUTPUT = {
  commentUrl: 'comment-url',
  gateState: 'gate-state',
  approved: 'approved',
  commitSha: 'commit-sha',
  pullRequestUrl: 'pull-request-url',
  runRequested: 'run-requested',
  task: 'task',
  headSha: 'head-sha',
  baseSha: 'base-sha',
  headRepository: 'head-repository',
  pullRequest: 'pull-request',
  fork: 'fork',
  evidenceRunId: 'evidence-run-id',
  evidenceArtifact: 'evidence-artifact'
} as const

export interface GitHubInputs {
  token: string
  outputDir: string
  /** The local checkout holding the head commit's objects (apply). */
  path: string
  gateContext: string
  /** Outcomes that turn the gate red at once (never approvable). */
  failOutcomes: Outcome[]
  allowSelfApproval: boolean | undefined
  dryRun: boolean
  /** Pull request number, when not taken from the event. */
  pullRequest?: number
  /** apply on workflow_dispatch: the new branch (default airlock/<run id>). */
  branch?: string
  /** apply on workflow_dispatch: base branch of the draft pull request (default the run's ref). */
  base?: string
  /** Slug of the GitHub App whose installation token `github-token` is (it acts as `<slug>[bot]`). */
  appSlug?: string
}

export function getGitHubInputs(
  read: InputReader,
  workspace: string,
  options: { tokenRequired: boolean }
): GitHubInputs {
  read = boundedReader(read)
  const token = read(GITHUB_INPUT.githubToken) ?? ''
  if (token === '' && options.tokenRequired) {
    throw new ConfigurationError(
      GITHUB_INPUT.githubToken,
      'is required for this mode; the default `${{ github.token }}` works when the job grants the permissions'
    )
  }
  const gateContext = read(GITHUB_INPUT.gateContext) ?? 'airlock/approval'
  if (gateContext.length > 100 || [...gateContext].some((c) => c.charCodeAt(0) < 0x20)) {
    throw new ConfigurationError(
      GITHUB_INPUT.gateContext,
      'must be one line of at most 100 characters'
    )
  }
  const failOutcomes = list(read(GITHUB_INPUT.failOutcomes) ?? 'policy-violation').map((o) => {
    if (!(OUTCOMES as string[]).includes(o)) {
      throw new ConfigurationError(
        GITHUB_INPUT.failOutcomes,
        `"${o}" is not an outcome; use some of: ${OUTCOMES.join(', ')}`
      )
    }
    return o as Outcome
  })
  if (!failOutcomes.includes('policy-violation')) failOutcomes.push('policy-violation')
  const prRaw = read(GITHUB_INPUT.pullRequest)
  let pullRequest: number | undefined
  if (prRaw !== undefined) {
    pullRequest = Number(prRaw)
    if (!Number.isSafeInteger(pullRequest) || pullRequest <= 0) {
      throw new ConfigurationError(
        GITHUB_INPUT.pullRequest,
        `"${prRaw}" is not a pull request number`
      )
    }
  }
  const branch = read(GITHUB_INPUT.branch)
  if (branch !== undefined) checkBranch(GITHUB_INPUT.branch, branch)
  const base = read(GITHUB_INPUT.base)
  if (base !== undefined) checkBranch(GITHUB_INPUT.base, base)
  const appSlug = read(GITHUB_INPUT.appSlug)
  if (appSlug !== undefined && !APP_SLUG.test(appSlug)) {
    throw new ConfigurationError(
      GITHUB_INPUT.appSlug,
      `"${appSlug}" is not a GitHub App slug; use the app-slug output of actions/create-github-app-token (lowercase letters, digits and dashes, without "[bot]")`
    )
  }
  return {
    token,
    appSlug,
    outputDir: resolveInside(workspace, read(GITHUB_INPUT.outputDir) ?? 'airlock-out'),
    path: resolveInside(workspace, read(GITHUB_INPUT.path) ?? '.'),
    gateContext,
    failOutcomes,
    // Not given: the policy file decides (default false).
    allowSelfApproval:
      read(GITHUB_INPUT.allowSelfApproval) === undefined
        ? undefined
        : bool(GITHUB_INPUT.allowSelfApproval, read(GITHUB_INPUT.allowSelfApproval), false),
    dryRun: bool(GITHUB_INPUT.dryRun, read(GITHUB_INPUT.dryRun), false),
    pullRequest,
    branch,
    base
  }
}

function resolveInside(workspace: string, p: string): string {
  return p.startsWith('/') ? p : `${workspace.replace(/\/+$/, '')}/${p}`
}

export function checkBranch(name: string, value: string): void {
  if (
    !/^[A-Za-z0-9._/-]{1,200}$/.test(value) ||
    value.startsWith('-') ||
    value.startsWith('/') ||
    value.endsWith('/') ||
    value.endsWith('.lock') ||
    value.includes('..') ||
    value.includes('//')
  ) {
    throw new ConfigurationError(name, `"${value}" is not a branch name`)
  }
}

/** The workflow run's event, as the runner describes it (GITHUB_* variables and the payload). */
export interface EventContext {
  eventName: string
  owner: string
  repo: string
  payload: Record<string, unknown>
  /** GITHUB_REF_NAME: the branch a workflow_dispatch ran on. */
  refName?: string
  serverUrl: string
}

export function readEventContext(env: NodeJS.ProcessEnv = process.env): EventContext {
  const repository = env.GITHUB_REPOSITORY ?? ''
  const m = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/.exec(repository)
  if (!m) throw new Error(`GITHUB_REPOSITORY "${repository}" is not owner/name`)
  let payload: Record<string, unknown> = {}
  const eventPath = env.GITHUB_EVENT_PATH
  if (eventPath !== undefined && eventPath !== '' && fs.existsSync(eventPath)) {
    const parsed: unknown = JSON.parse(fs.readFileSync(eventPath, 'utf8'))
    if (typeof parsed === 'object' && parsed !== null) payload = parsed as Record<string, unknown>
  }
  return {
    eventName: env.GITHUB_EVENT_NAME ?? '',
    owner: m[1],
    repo: m[2],
    payload,
    refName: env.GITHUB_REF_NAME,
    serverUrl: (env.GITHUB_SERVER_URL ?? 'https://github.com').replace(/\/+$/, '')
  }
}

function obj(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined
}

/** The pull request number of the event (pull_request*, pull_request_review*, issue_comment on a PR). */
export function eventPullNumber(ctx: EventContext, override?: number): number | undefined {
  if (override !== undefined) return override
  const pr = obj(ctx.payload.pull_request)
  if (pr && typeof pr.number === 'number') return pr.number
  const issue = obj(ctx.payload.issue)
  if (issue && obj(issue.pull_request) && typeof issue.number === 'number') return issue.number
  return undefined
}

export { obj as asObject }

/** The base SHA of the pull request in the event payload, if the event is about one. */
export function eventBaseSha(
  eventPath: string | undefined,
  readFile: (p: string) => string
): string | undefined {
  if (eventPath === undefined || eventPath === '') return undefined
  try {
    const event = JSON.parse(readFile(eventPath)) as {
      pull_request?: { base?: { sha?: unknown } }
    }
    const sha = event.pull_request?.base?.sha
    return typeof sha === 'string' && /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha) ? sha : undefined
  } catch {
    return undefined
  }
}
