/**
 * GitHub's rules for starting workflow runs, as GitHub enforces them (not as we would like them
 * to be), shared by the API stand-in (./github-stand-in.ts) and the runner emulation
 * (./workflow-run.ts, ./workflows.ts). Each is documented by GitHub:
 *
 * - An event caused by a workflow's GITHUB_TOKEN starts no workflow run, except
 *   `workflow_dispatch` and `repository_dispatch` ("Triggering a workflow from a workflow").
 * - A `pull_request`, `pull_request_review` or `pull_request_review_comment` run of a pull request
 *   from a fork gets a read-only GITHUB_TOKEN and no secrets; a run Dependabot caused gets the
 *   Dependabot secrets only, and a read-only token ("Workflows in forked repositories",
 *   "Automating Dependabot with GitHub Actions").
 * - A fork's pull request from a first-time contributor waits for a maintainer's "Approve and
 *   run" before any of its runs start (the default "Require approval for first-time
 *   contributors").
 * - Which copy of the workflow file runs: `issue_comment`, `workflow_run`, `workflow_dispatch`
 *   and `push` of the default branch read the default branch's; `pull_request`,
 *   `pull_request_review` and `pull_request_review_comment` read the pull request's merge commit.
 * - An App installation token may ask only for permissions the App was granted: anything else is
 *   refused with 422 "The permissions requested are not granted to this installation."
 */
import type { Permissions } from './workflows.js'

/** The events a GITHUB_TOKEN may still start workflows with. */
const DISPATCH = new Set(['workflow_dispatch', 'repository_dispatch'])

export function startsWorkflows(event: string, byWorkflowToken: boolean): boolean {
  return !byWorkflowToken || DISPATCH.has(event)
}

/** The pull request events whose runs a fork (or Dependabot) gets only restricted. */
const PULL_REQUEST_EVENTS = new Set([
  'pull_request',
  'pull_request_review',
  'pull_request_review_comment'
])

/** Who caused a run and from where: what GitHub's restrictions depend on. */
export interface RunOrigin {
  event: string
  /** The pull request's head is in another repository. */
  fork?: boolean
  /** The actor is dependabot[bot]. */
  dependabot?: boolean
}

/** Whether the run is restricted (read-only token, no repository secrets). */
export function restricted(o: RunOrigin): boolean {
  return (PULL_REQUEST_EVENTS.has(o.event) && o.fork === true) || o.dependabot === true
}

/**
 * The secrets a run sees: the repository's, none for a fork's pull request, the Dependabot
 * secrets only for a run Dependabot caused.
 */
export function runSecrets(
  o: RunOrigin,
  s: { repository: Record<string, string>; dependabot?: Record<string, string> }
): Record<string, string> {
  if (o.dependabot === true) return { ...(s.dependabot ?? {}) }
  if (restricted(o)) return {}
  return { ...s.repository }
}

/** The GITHUB_TOKEN a job gets: what it asks for, lowered to read for a restricted run. */
export function tokenPermissions(o: RunOrigin, asked: Permissions): Permissions {
  if (!restricted(o)) return { ...asked }
  return Object.fromEntries(Object.keys(asked).map((k) => [k, 'read'])) as Permissions
}

/** Events whose runs read the workflow file at the default branch. */
const DEFAULT_BRANCH_EVENTS = new Set([
  'issue_comment',
  'workflow_run',
  'workflow_dispatch',
  'repository_dispatch',
  'schedule',
  'push'
])

/**
 * Which commit's copy of the workflow file a run of `event` reads: the default branch's head, or
 * the pull request's merge commit.
 */
export function workflowRevision(
  event: string,
  at: { defaultBranch: string; pullRequestMerge?: string }
): string {
  if (DEFAULT_BRANCH_EVENTS.has(event)) return at.defaultBranch
  if (PULL_REQUEST_EVENTS.has(event)) {
    if (at.pullRequestMerge === undefined)
      throw new Error(`a ${event} run needs the pull request's merge commit`)
    return at.pullRequestMerge
  }
  throw new Error(`no rule for which workflow file a ${event} run reads`)
}

/**
 * Whether a fork's pull request run waits for a maintainer's "Approve and run": its author has
 * no earlier contribution merged into the repository (GitHub's default setting).
 */
export function waitsForApproval(o: RunOrigin & { firstTimeContributor?: boolean }): boolean {
  return o.fork === true && o.firstTimeContributor === true && PULL_REQUEST_EVENTS.has(o.event)
}

const LEVEL = { read: 1, write: 2 } as const

/**
 * create-github-app-token's `permission-<name>` inputs checked against what the App was granted:
 * the error GitHub answers (422) for a permission the App lacks or holds at a lower level, or
 * undefined when the token can be minted.
 */
export function refusedAppPermissions(
  granted: Permissions,
  inputs: Record<string, string>
): string | undefined {
  for (const [key, value] of Object.entries(inputs)) {
    const m = /^permission-(.+)$/.exec(key)
    // create-github-app-token sends every permission input it is given, an empty one too.
    if (!m) continue
    const scope = m[1]
    const want = value as keyof typeof LEVEL
    const has = granted[scope]
    if (has === undefined || LEVEL[has] < (LEVEL[want] ?? 3))
      return `HttpError: The permissions requested are not granted to this installation. (422; ${scope}: ${value} asked, the App has ${has ?? 'none'})`
  }
  return undefined
}
