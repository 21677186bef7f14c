import { stripHidden } from '../../text-filter.js'
import type { Outcome } from '../../report/report.js'
import type { GitHubClient } from '../client/client.js'
import type { ReportFacts } from '../../report/evidence-folder.js'
import type { Identity } from '../client/writes.js'
import { PROTECTED_NOTE, tallyDescription } from './approval-count.js'
import type { Tally } from './approval-count.js'

export type GateState = 'pending' | 'failure' | 'success' | 'error'

/** The body of `POST /repos/{owner}/{repo}/statuses/{sha}`. */
export interface StatusPayload {
  state: GateState
  context: string
  description: string
  target_url?: string
}

/** GitHub cuts status descriptions at 140 characters. */
const MAX_DESCRIPTION = 140

export function shortSha(sha: string | null): string {
  return sha === null ? 'none' : sha.slice(0, 12)
}

function description(text: string): string {
  const one = stripHidden(text).replace(/\s+/g, ' ').trim()
  return one.length <= MAX_DESCRIPTION ? one : one.slice(0, MAX_DESCRIPTION - 1) + '…'
}

/**
 * The gate after a run: red at once for outcomes the configuration forbids outright (policy
 * violations always), otherwise pending until an authorized human approves this diff.
 */
export function gateAfterRun(
  report: ReportFacts,
  failOutcomes: readonly Outcome[],
  context: string,
  targetUrl?: string,
  /** The diff changes protected paths: the gate says so, and approve reads it back. */
  protectedChanged = false,
  /** The review did not show the whole diff: approval needs its full SHA-256 and `unseen`. */
  partial = false,
  /** The threat review flagged the diff: approval needs `threats`. */
  threatsFlagged = false
): StatusPayload {
  const base = { context, ...(targetUrl ? { target_url: targetUrl } : {}) }
  if (failOutcomes.includes(report.outcome)) {
    const rule = report.violations[0]?.rule
    return {
      ...base,
      state: 'failure',
      description: description(
        `${report.outcome}${rule ? ` (${rule})` : ''}: not approvable; run ${report.runId}`
      )
    }
  }
  return {
    ...base,
    state: 'pending',
    description: description(
      `awaiting approval of diff ${shortSha(report.diffSha256)}${protectedChanged ? PROTECTED_NOTE : ''}` +
        (threatsFlagged ? '; threat review: acknowledge with threats' : '') +
        (partial ? '; not all shown in the review: approve with its full SHA-256 and unseen' : '')
    )
  }
}

/** The gate after an approval that counted but is not yet enough: pending, with the tally. */
export function gatePartly(
  tally: Tally,
  required: number,
  short: string,
  context: string,
  targetUrl?: string
): StatusPayload {
  return {
    context,
    ...(targetUrl ? { target_url: targetUrl } : {}),
    state: 'pending',
    description: description(tallyDescription(tally, required, short))
  }
}

/** A gate status of `context` (with the run's link when there is one). */
function gateStatus(
  state: 'pending' | 'success',
  text: string,
  context: string,
  targetUrl: string | undefined
): StatusPayload {
  return {
    context,
    ...(targetUrl ? { target_url: targetUrl } : {}),
    state,
    description: description(text)
  }
}

/** `unseen`: the approver stated that the review did not show them the whole diff. */
export function gateApproved(
  approver: string,
  diffSha256: string | null,
  context: string,
  targetUrl?: string,
  unseen = false
): StatusPayload {
  const text =
    `approved by @${approver} for diff ${shortSha(diffSha256)}` +
    (unseen ? ', parts not shown in the review' : '')
  return gateStatus('success', text, context, targetUrl)
}

export interface CurrentStatus {
  state: string
  description: string | null
  creator: string | null
  /** When the action set this state (ISO 8601), when GitHub says. */
  createdAt: string | null
}

/**
 * The latest status of `context` on a commit that the action's own identity created, or null.
 * Anyone who can write statuses (a workflow of the pull request, a collaborator's token) can post
 * one with the same context; such statuses are never believed, whatever they say.
 */
export async function currentGate(
  octokit: GitHubClient,
  owner: string,
  repo: string,
  sha: string,
  context: string,
  me: Identity
): Promise<CurrentStatus | null> {
  // Statuses come newest first: the first of ours with this context is our current one.
  for await (const page of octokit.paginate.iterator(octokit.rest.repos.listCommitStatusesForRef, {
    owner,
    repo,
    ref: sha,
    per_page: 100
  })) {
    for (const s of page.data) {
      if (s.context !== context) continue
      const creator = s.creator?.login ?? null
      if (creator === null || creator.toLowerCase() !== me.login.toLowerCase()) continue
      return {
        state: s.state,
        description: s.description,
        creator,
        createdAt: typeof s.created_at === 'string' ? s.created_at : null
      }
    }
  }
  return null
}
