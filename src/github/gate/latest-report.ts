/**
 * The action's own reports on a pull request: the latest one (its review's marker, id and time),
 * where its evidence is, and whether other open pull requests share its head commit.
 */
import type { GitHubClient } from '../client/client.js'
import type { EventContext } from '../client/context.js'
import { openPullsAt } from '../client/pulls.js'
import type { Identity } from '../client/writes.js'
import { isSuperseded, parseMarker } from '../review/marker.js'
import type { Marker } from '../review/marker.js'
import { shortSha } from './gate.js'

type Repo = { owner: string; repo: string }

/**
 * The action's own latest report on a pull request (not superseded), with its review id and the
 * time it was posted.
 */
export async function latestReport(
  octokit: GitHubClient,
  repo: Repo,
  pullNumber: number,
  me: Identity
): Promise<{ id: number; marker: Marker; submittedAt: string | null } | null> {
  const reviews = await octokit.paginate(octokit.rest.pulls.listReviews, {
    ...repo,
    pull_number: pullNumber,
    per_page: 100
  })
  const own = reviews
    .filter((r) => r.user?.login === me.login && r.state !== 'PENDING')
    .map((r) => ({
      id: r.id,
      body: r.body ?? '',
      marker: parseMarker(r.body),
      submittedAt: r.submitted_at ?? null
    }))
    .filter((r) => r.marker !== null && !isSuperseded(r.body))
    .sort((a, b) => b.id - a.id)
  const top = own[0]
  return top?.marker ? { id: top.id, marker: top.marker, submittedAt: top.submittedAt } : null
}

export /**
 * A status belongs to the commit, not to the pull request: every open pull request with this head
 * would turn green. Each must have the same diff as its latest report (null), and none may be
 * opened by the approver unless self-approval is allowed.
 */
async function sharedHead(
  octokit: GitHubClient,
  me: Identity,
  ctx: EventContext,
  pullNumber: number,
  head: string,
  latest: Marker,
  login: string,
  allowSelfApproval: boolean
): Promise<string | null> {
  const repo = { owner: ctx.owner, repo: ctx.repo }
  for (const other of await openPullsAt(octokit, ctx.owner, ctx.repo, head)) {
    if (other === pullNumber) continue
    const theirs = (await latestReport(octokit, repo, other, me))?.marker
    if (theirs?.headSha !== head || theirs.diffSha256 !== latest.diffSha256) {
      return `head ${head.slice(0, 12)} is also the head of pull request #${other}, whose latest report is ${theirs ? `for diff ${shortSha(theirs.diffSha256)}` : 'missing'}; a status applies to the commit, so it is approved only for a diff every such pull request shares`
    }
    const otherPr = (await octokit.rest.pulls.get({ ...repo, pull_number: other })).data
    if (!allowSelfApproval && otherPr.user?.login === login) {
      return `@${login} opened pull request #${other}, which has the same head; someone else must approve`
    }
  }
  return null
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
