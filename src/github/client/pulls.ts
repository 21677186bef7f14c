import type { GitHubClient } from './client.js'

/**
 * The open pull requests whose head is `headSha` from `headRepository`. A `workflow_run` event
 * lists no pull requests when the head comes from a fork, so they are found here, by head
 * repository and head commit, among the repository's open pull requests.
 */
export async function openPullsAt(
  octokit: GitHubClient,
  owner: string,
  repo: string,
  headSha: string,
  headRepository?: string
): Promise<number[]> {
  const found: number[] = []
  for await (const page of octokit.paginate.iterator(octokit.rest.pulls.list, {
    owner,
    repo,
    state: 'open',
    per_page: 100
  })) {
    for (const pr of page.data) {
      if (pr.head.sha !== headSha) continue
      const from = pr.head.repo?.full_name ?? null
      if (headRepository !== undefined && from?.toLowerCase() !== headRepository.toLowerCase())
        continue
      found.push(pr.number)
    }
  }
  return found.sort((a, b) => a - b)
}

/** Every review on the pull request, all pages, pending ones included. */
export async function listReviews(
  octokit: GitHubClient,
  repo: { owner: string; repo: string },
  pullNumber: number
) {
  return octokit.paginate(octokit.rest.pulls.listReviews, {
    owner: repo.owner,
    repo: repo.repo,
    pull_number: pullNumber,
    per_page: 100
  })
}
