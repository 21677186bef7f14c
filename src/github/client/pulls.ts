import type { GitHubClient } from './client.js'
import type { EventContext } from './context.js'
import { asObject } from './context.js'

/** The finished run a `workflow_run` event is about: its head commit and where that comes from. */
export interface FinishedRun {
  id: number
  headSha: string
  /** owner/name of the repository the head commit comes from (a fork for fork pull requests). */
  headRepository: string
  /** The event that started the run (pull_request, pull_request_review, issue_comment, ...). */
  event: string
  conclusion: string | null
}

/** Reads the `workflow_run` payload; null for any other event or a malformed payload. */
export function finishedRun(ctx: EventContext): FinishedRun | null {
  if (ctx.eventName !== 'workflow_run') return null
  const run = asObject(ctx.payload.workflow_run)
  const headRepo = asObject(run?.head_repository)
  if (
    !run ||
    typeof run.id !== 'number' ||
    typeof run.head_sha !== 'string' ||
    !/^[0-9a-f]{40}$/.test(run.head_sha) ||
    typeof headRepo?.full_name !== 'string'
  )
    return null
  return {
    id: run.id,
    headSha: run.head_sha,
    headRepository: headRepo.full_name,
    event: typeof run.event === 'string' ? run.event : '',
    conclusion: typeof run.conclusion === 'string' ? run.conclusion : null
  }
}

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
