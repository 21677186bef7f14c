// What every GitHub mode reads first: its inputs (token, output folder, gate context, ...) and
// the runner's context the entry built once (ModeEnv).
import { ConfigurationError } from '../../errors.js'
import type { RunEvent } from '../../event.js'
import { INPUT } from '../../input-names.js'
import { bool, list } from '../../input-read.js'
import type { InputReader } from '../../input-read.js'
import { boundedReader } from '../../input-bounds.js'
import type { Outcome } from '../../report/report.js'
import { OUTCOMES } from '../../report/evidence-folder.js'
import type { Runner } from '../../runner.js'
import { checkBranch } from '../apply/branch.js'
import { APP_SLUG } from '../client/writes.js'

/** What the modes know of the runner, built once by the entry: the event, the folders, the runner. */
export interface ModeEnv {
  event: RunEvent
  /** GITHUB_WORKSPACE (relative inputs resolve against it). */
  workspace: string
  runner: Runner
}

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
  const token = read(INPUT.githubToken) ?? ''
  if (token === '' && options.tokenRequired) {
    throw new ConfigurationError(
      INPUT.githubToken,
      'is required for this mode; the default `${{ github.token }}` works when the job grants the permissions'
    )
  }
  const gateContext = read(INPUT.gateContext) ?? 'airlock/approval'
  if (gateContext.length > 100 || [...gateContext].some((c) => c.charCodeAt(0) < 0x20)) {
    throw new ConfigurationError(INPUT.gateContext, 'must be one line of at most 100 characters')
  }
  const failOutcomes = list(read(INPUT.failOutcomes) ?? 'policy-violation').map((o) => {
    if (!(OUTCOMES as string[]).includes(o)) {
      throw new ConfigurationError(
        INPUT.failOutcomes,
        `"${o}" is not an outcome; use some of: ${OUTCOMES.join(', ')}`
      )
    }
    return o as Outcome
  })
  if (!failOutcomes.includes('policy-violation')) failOutcomes.push('policy-violation')
  const prRaw = read(INPUT.pullRequest)
  let pullRequest: number | undefined
  if (prRaw !== undefined) {
    pullRequest = Number(prRaw)
    if (!Number.isSafeInteger(pullRequest) || pullRequest <= 0) {
      throw new ConfigurationError(INPUT.pullRequest, `"${prRaw}" is not a pull request number`)
    }
  }
  const branch = read(INPUT.branch)
  if (branch !== undefined) checkBranch(INPUT.branch, branch)
  const base = read(INPUT.base)
  if (base !== undefined) checkBranch(INPUT.base, base)
  const appSlug = read(INPUT.appSlug)
  if (appSlug !== undefined && !APP_SLUG.test(appSlug)) {
    throw new ConfigurationError(
      INPUT.appSlug,
      `"${appSlug}" is not a GitHub App slug; use the app-slug output of actions/create-github-app-token (lowercase letters, digits and dashes, without "[bot]")`
    )
  }
  return {
    token,
    appSlug,
    outputDir: resolveInside(workspace, read(INPUT.outputDir) ?? 'airlock-out'),
    path: resolveInside(workspace, read(INPUT.path) ?? '.'),
    gateContext,
    failOutcomes,
    // Not given: the policy file decides (default false).
    allowSelfApproval:
      read(INPUT.allowSelfApproval) === undefined
        ? undefined
        : bool(INPUT.allowSelfApproval, read(INPUT.allowSelfApproval), false),
    dryRun: bool(INPUT.dryRun, read(INPUT.dryRun), false),
    pullRequest,
    branch,
    base
  }
}

function resolveInside(workspace: string, p: string): string {
  return p.startsWith('/') ? p : `${workspace.replace(/\/+$/, '')}/${p}`
}
