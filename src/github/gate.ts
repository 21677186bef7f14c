import { stripControls } from '../report/escape.js'
import type { Outcome } from '../report/report.js'
import type { GitHubClient } from './client.js'
import type { ReportFacts } from './evidence.js'

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
  const one = stripControls(text).replace(/\s+/g, ' ').trim()
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
  targetUrl?: string
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
    description: description(`awaiting approval of diff ${shortSha(report.diffSha256)}`)
  }
}

export function gateApproved(
  approver: string,
  diffSha256: string | null,
  context: string,
  targetUrl?: string
): StatusPayload {
  return {
    context,
    ...(targetUrl ? { target_url: targetUrl } : {}),
    state: 'success',
    description: description(`approved by @${approver} for diff ${shortSha(diffSha256)}`)
  }
}

export interface CurrentStatus {
  state: string
  description: string | null
  creator: string | null
}

/** The latest status of `context` on a commit, or null when there is none. */
export async function currentGate(
  octokit: GitHubClient,
  owner: string,
  repo: string,
  sha: string,
  context: string
): Promise<CurrentStatus | null> {
  // Statuses come newest first; the first one with our context is the one GitHub shows.
  for await (const page of octokit.paginate.iterator(octokit.rest.repos.listCommitStatusesForRef, {
    owner,
    repo,
    ref: sha,
    per_page: 100
  })) {
    for (const s of page.data) {
      if (s.context === context) {
        return { state: s.state, description: s.description, creator: s.creator?.login ?? null }
      }
    }
  }
  return null
}
