/** Whether other open pull requests share the head commit a status would approve. */
import type { GitHubClient } from '../client/client.js'
import { openPullsAt } from '../client/pulls.js'
import type { Identity } from '../client/writes.js'
import type { Marker } from '../review/marker.js'
import { latestReport } from '../review/reports.js'
import { shortSha } from './gate.js'

type Repo = { owner: string; repo: string }

/**
 * A status belongs to the commit, not to the pull request: every open pull request with this head
 * would turn green. Each must have the same diff as its latest report (null), and none may be
 * opened by the approver unless self-approval is allowed.
 */
export async function sharedHead(
  octokit: GitHubClient,
  me: Identity,
  ctx: Repo,
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
