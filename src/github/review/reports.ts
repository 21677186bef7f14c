// The action's own reports on a pull request: its reviews that carry a valid marker. The one
// query behind publishing (all of them, pending included), approving, applying, locating the
// evidence and following up (the latest one). Only the action's own identity's markers count.
import type { GitHubClient } from '../client/client.js'
import { listReviews } from '../client/pulls.js'
import type { Identity } from '../client/writes.js'
import { isSuperseded, parseMarker } from './marker.js'
import type { Marker } from './marker.js'

type Repo = { owner: string; repo: string }

export interface ReviewInfo {
  id: number
  login: string | null
  state: string
  body: string
  html_url: string
  submittedAt: string | null
  marker: Marker | null
}

/** The action's own reviews on the pull request that carry a valid marker: nobody else's count. */
export async function ownReports(
  octokit: GitHubClient,
  repo: Repo,
  pullNumber: number,
  me: Identity
): Promise<ReviewInfo[]> {
  return (await listReviews(octokit, repo, pullNumber))
    .map((r) => ({
      id: r.id,
      login: r.user?.login ?? null,
      state: r.state,
      body: r.body ?? '',
      html_url: r.html_url,
      submittedAt: r.submitted_at ?? null,
      marker: parseMarker(r.body)
    }))
    .filter((r) => r.login === me.login && r.marker !== null)
}

/**
 * The action's own latest report on a pull request (submitted, not superseded), with its review
 * id and the time it was posted; null when there is none.
 */
export async function latestReport(
  octokit: GitHubClient,
  repo: Repo,
  pullNumber: number,
  me: Identity
): Promise<{ id: number; marker: Marker; submittedAt: string | null } | null> {
  const top = (await ownReports(octokit, repo, pullNumber, me))
    .filter((r) => r.state !== 'PENDING' && !isSuperseded(r.body))
    .sort((a, b) => b.id - a.id)[0]
  return top?.marker ? { id: top.id, marker: top.marker, submittedAt: top.submittedAt } : null
}

/**
 * Where the evidence of a report is: the workflow run whose artifact holds it and that
 * artifact's default name (`airlock-<run id>-<attempt>`), read from the report's run id. A run id
 * the workflow chose itself (the `run-id` input) names no run: null.
 */
export function evidenceLocation(marker: Marker): { runId: string; artifact: string } | null {
  const m = /^([0-9]{1,20})-([0-9]{1,6})$/.exec(marker.runId)
  return m ? { runId: m[1], artifact: `airlock-${m[1]}-${m[2]}` } : null
}
