import type { ContinueContext, DiscussionComment } from '../../continue-context.js'
import { MAX_DISCUSSION_COMMENTS, associationOf } from '../../continue-context.js'
import type { GitHubClient } from '../client/client.js'
import { evidenceLocation, latestReport } from '../review/reports.js'
import type { Identity } from '../client/writes.js'

/** The earlier run a `/airlock run` continues: where its evidence is, and the context for the run. */
export interface FollowUp {
  /** The workflow run whose artifact holds the earlier evidence (download-artifact's run-id). */
  runId: string
  artifact: string
  context: ContinueContext
}

type Repo = { owner: string; repo: string }

interface ReviewComment {
  id: number
  body: string
  path: string
  line?: number | null
  original_line?: number | null
  created_at: string
  in_reply_to_id?: number
  pull_request_review_id: number | null
  user: { login: string; type?: string } | null
  author_association?: string
}

/**
 * The pull request's earlier Airlock run, as the command job sees it: the action's own latest
 * review that is not superseded and carries a valid marker (only those are believed; a review or
 * comment anyone else wrote, marker or not, is never taken for a run), the run its marker names,
 * and the discussion on its inline findings since it was posted — the people's replies in the
 * threads of the review's own comments, oldest first, the latest MAX_DISCUSSION_COMMENTS. Null
 * when the pull request has no such review, or its run id names no workflow run.
 */
export async function findEarlierRun(
  octokit: GitHubClient,
  repo: Repo,
  pullNumber: number,
  me: Identity,
  serverUrl: string,
  /** The command: its comment (never part of the discussion) and the thread it replied in. */
  command: { commentId?: number; threadId?: number } = {}
): Promise<FollowUp | null> {
  const report = await latestReport(octokit, repo, pullNumber, me)
  if (report === null) return null
  const where = evidenceLocation(report.marker)
  if (where === null) return null
  const all = (await octokit.paginate(octokit.rest.pulls.listReviewComments, {
    ...repo,
    pull_number: pullNumber,
    per_page: 100
  })) as unknown as ReviewComment[]
  const others = all.filter((c) => c.id !== command.commentId)
  // A reply in a finding's thread uses that thread: the finding, and that thread's replies.
  const root =
    command.threadId === undefined
      ? undefined
      : others.find(
          (c) =>
            c.id === command.threadId &&
            c.pull_request_review_id === report.id &&
            c.user?.login === me.login
        )
  const comments = discussionSince(others, report.id, me, report.submittedAt, root?.id)
  return {
    runId: where.runId,
    artifact: where.artifact,
    context: {
      runId: report.marker.runId,
      headSha: report.marker.headSha,
      diffSha256: report.marker.diffSha256,
      reviewUrl: `${serverUrl}/${repo.owner}/${repo.repo}/pull/${pullNumber}#pullrequestreview-${report.id}`,
      comments,
      ...(root !== undefined
        ? {
            thread: {
              path: root.path,
              line: root.line ?? root.original_line ?? null,
              finding: root.body
            }
          }
        : {})
    }
  }
}

/**
 * The replies in the threads of review `reviewId`'s own inline comments (the findings the action
 * posted), by people (not the action, not a bot), posted at or after `since`, oldest first; with
 * `thread`, that thread's only.
 */
export function discussionSince(
  comments: readonly ReviewComment[],
  reviewId: number,
  me: Identity,
  since: string | null,
  /** Only this thread (the id of its first comment). */
  thread?: number
): DiscussionComment[] {
  const roots = new Map(
    comments
      .filter((c) => c.pull_request_review_id === reviewId && c.user?.login === me.login)
      .map((c) => [c.id, c])
  )
  const after = since === null ? 0 : Date.parse(since)
  return comments
    .filter(
      (c) =>
        c.in_reply_to_id !== undefined &&
        roots.has(c.in_reply_to_id) &&
        (thread === undefined || c.in_reply_to_id === thread) &&
        c.user !== null &&
        c.user.login !== me.login &&
        c.user.type !== 'Bot' &&
        !c.user.login.endsWith('[bot]') &&
        !(Date.parse(c.created_at) < after)
    )
    .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || a.id - b.id)
    .slice(-MAX_DISCUSSION_COMMENTS)
    .map((c) => {
      const root = roots.get(c.in_reply_to_id as number) as ReviewComment
      return {
        author: (c.user as { login: string }).login,
        body: c.body,
        path: root.path,
        line: root.line ?? root.original_line ?? null,
        ...(associationOf(c.author_association) !== undefined
          ? { association: associationOf(c.author_association) }
          : {})
      }
    })
}
