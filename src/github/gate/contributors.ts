/**
 * Who wrote the pull request: the accounts that authored or committed its commits, and the
 * accounts that pushed them onto its head branch. None of them may approve it (GitHub's "most
 * recent reviewable push" rule, widened to every commit of the pull request), unless the policy
 * allows self-approval.
 */
import type { GitHubClient } from '../client/client.js'
import { errorText } from './approvers.js'

type Repo = { owner: string; repo: string }

/** What `pulls.get` returns that this check reads. */
export interface PullFacts {
  number: number
  head: { sha: string; ref: string; repo: { full_name: string } | null }
  /** The number of commits GitHub counts on the pull request, when it says. */
  commits?: number
}

/** GitHub lists at most 250 commits of a pull request. */
const MAX_LISTED_COMMITS = 250

/**
 * Null when `login` neither authored, committed nor pushed a commit of the pull request, else
 * the reason they cannot approve it. Fail-closed: when the commits or the pushes of the head
 * cannot be read completely (the head repository's activity is not readable, no push of the head
 * is listed, more commits than GitHub lists), the reason says so and the approval is refused.
 */
export async function contributorCheck(
  octokit: GitHubClient,
  repo: Repo,
  pr: PullFacts,
  login: string
): Promise<string | null> {
  const me = login.toLowerCase()
  const head = pr.head.sha.slice(0, 12)
  const commits = await octokit.paginate(octokit.rest.pulls.listCommits, {
    ...repo,
    pull_number: pr.number,
    per_page: 100
  })
  if (
    commits.length >= MAX_LISTED_COMMITS ||
    (pr.commits !== undefined && pr.commits > commits.length)
  ) {
    return `the pull request has more commits than GitHub lists (${pr.commits ?? commits.length}); their authors cannot all be checked`
  }
  const shas = new Set(commits.map((c) => c.sha))
  shas.add(pr.head.sha)
  if (commits.some((c) => c.author?.login?.toLowerCase() === me)) {
    return `@${login} authored commits of this pull request; someone else must approve (or set allow-self-approval)`
  }
  if (commits.some((c) => c.committer?.login?.toLowerCase() === me)) {
    return `@${login} committed commits of this pull request; someone else must approve (or set allow-self-approval)`
  }
  // Who moved the head branch onto a commit of the pull request: the repository activity of the
  // head repository (a fork's for a fork's pull request), for that branch.
  const headRepo = pr.head.repo?.full_name ?? ''
  const [owner, name] = headRepo.split('/')
  let pushes: { after: string; actor: { login: string } | null }[]
  try {
    if (!owner || !name) throw new Error('the head repository is gone')
    pushes = await octokit.paginate(octokit.rest.repos.listActivities, {
      owner,
      repo: name,
      ref: `refs/heads/${pr.head.ref}`,
      per_page: 100
    })
  } catch (error) {
    return `who pushed head ${head} cannot be read (${errorText(error)}); approving needs the head repository's activity`
  }
  const ofThisPull = pushes.filter((a) => shas.has(a.after))
  if (!ofThisPull.some((a) => a.after === pr.head.sha)) {
    return `who pushed head ${head} cannot be read (the activity of ${headRepo} lists no push of it)`
  }
  if (ofThisPull.some((a) => a.actor === null)) {
    return `who pushed head ${head} cannot be read (a push of this pull request names no account)`
  }
  if (ofThisPull.some((a) => a.actor?.login.toLowerCase() === me)) {
    return `@${login} pushed commits of this pull request; someone else must approve (or set allow-self-approval)`
  }
  return null
}
