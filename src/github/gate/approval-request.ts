import type { GitHubClient } from '../client/client.js'
import type { EventReview, RunEvent } from '../../event.js'
import { repositoryOf } from '../../event.js'
import { listReviews, openPullsAt } from '../client/pulls.js'
import type { Identity } from '../client/writes.js'

/** An approval (or its revocation) read from the event, before any check. */
export interface ApprovalRequest {
  /** approve: an approving review or command; revoke: a writer requested changes. */
  /**
   * approve: an approving review or command; revoke: someone requested changes; recheck: a review
   * was dismissed (the decision is rebuilt from the record, as after every event).
   */
  kind: 'approve' | 'revoke' | 'recheck'
  pullNumber: number
  actor: { login: string; type: string }
  /** The commit a review was submitted on (reviews only). */
  commitId?: string
  /** The review's id (reviews only): it must be newer than the report it approves. */
  reviewId?: number
  /** The diff SHA-256 prefix the approver named (`/airlock approve <prefix>`), if any. */
  diffPrefix?: string
  /** The command acknowledged protected paths: `/airlock approve <prefix> protected`. */
  acknowledgesProtected?: boolean
  /** The command acknowledged the threat review's findings: `/airlock approve <prefix> threats`. */
  acknowledgesThreats?: boolean
  /**
   * `/airlock approve <sha256> unseen`: the approver states that the review did not show them
   * the whole diff (required when it did not).
   */
  unseen?: boolean
  /**
   * When the approval was given (a comment's `created_at`, a review's `submitted_at`): an
   * approval older than the report or gate state it would approve is a replay and is refused.
   */
  at?: string
  source: 'review' | 'comment'
}

/**
 * The approval command: the first line of the comment (or review body), starting at its first
 * character. Further down, quoted, indented or inside a code block it is text, not a command —
 * so a comment explaining how to approve does not approve.
 */
const COMMAND =
  /^\/airlock[ \t]+approve(?:[ \t]+(\S+))?((?:[ \t]+(?:protected|threats|unseen))*)[ \t]*(?:\r?\n|$)/

/**
 * The words after the prefix: `protected` acknowledges protected paths, `threats` the threat
 * review's findings, `unseen` a partial review.
 */
function words(m: RegExpExecArray | null | undefined): {
  protected: boolean
  threats: boolean
  unseen: boolean
} {
  const w = (m?.[2] ?? '').trim().split(/[ \t]+/)
  return {
    protected: w.includes('protected'),
    threats: w.includes('threats'),
    unseen: w.includes('unseen')
  }
}

function command(body: unknown): RegExpExecArray | null {
  return typeof body === 'string' ? COMMAND.exec(body) : null
}

/** The approval command of a comment or review body (its first line), or null when none. */
export function approvalCommand(
  body: unknown
): { diffPrefix: string; protected: boolean; threats: boolean; unseen: boolean } | null {
  const m = command(body)
  return m ? { diffPrefix: m[1] ?? '', ...words(m) } : null
}

/**
 * Reads an approval from the event: a submitted review in state `approved` (or
 * `changes_requested`, which revokes), or a new comment on a pull request whose first line is
 * `/airlock approve <diff-sha-prefix>`. Anything else is not an approval (null). `workflow_run`
 * events are read with {@link approvalFromFinishedRun}.
 */
export function approvalRequest(event: RunEvent): ApprovalRequest | null {
  const pullNumber = event.pullRequest?.number
  if (pullNumber === undefined) return null
  if (event.name === 'pull_request_review') {
    if (event.review === undefined) return null
    if (event.action === 'dismissed') return recheck(pullNumber, event.review, event.sender)
    if (event.action !== 'submitted') return null
    return fromReview(pullNumber, event.review)
  }
  if (event.name === 'issue_comment') {
    const comment = event.comment
    if (event.action !== 'created' || comment === undefined) return null
    const m = command(comment.body)
    if (!m) return null
    return {
      kind: 'approve',
      pullNumber,
      actor: comment.author,
      diffPrefix: m[1] ?? '',
      acknowledgesProtected: words(m).protected,
      acknowledgesThreats: words(m).threats,
      unseen: words(m).unseen,
      at: comment.createdAt,
      source: 'comment'
    }
  }
  return null
}

/** A dismissed review: nothing to approve, the decision is rebuilt (who dismissed it is the actor). */
function recheck(
  pullNumber: number,
  review: { id?: number; user?: { login: string; type?: string } | null },
  sender: { login: string; type?: string } | null | undefined
): ApprovalRequest | null {
  const user = sender ?? review.user
  if (!user || typeof user.login !== 'string') return null
  return {
    kind: 'recheck',
    pullNumber,
    actor: { login: user.login, type: String(user.type ?? '') },
    ...(typeof review.id === 'number' ? { reviewId: review.id } : {}),
    source: 'review'
  }
}

function fromReview(pullNumber: number, review: EventReview): ApprovalRequest | null {
  const state = String(review.state).toLowerCase()
  if (state !== 'approved' && state !== 'changes_requested') return null
  const user = review.user
  if (!user || typeof user.login !== 'string') return null
  const m = command(review.body)
  return {
    kind: state === 'approved' ? 'approve' : 'revoke',
    pullNumber,
    actor: { login: user.login, type: String(user.type ?? '') },
    commitId: typeof review.commit_id === 'string' ? review.commit_id : undefined,
    reviewId: typeof review.id === 'number' ? review.id : undefined,
    diffPrefix: m?.[1],
    acknowledgesProtected: words(m).protected,
    acknowledgesThreats: words(m).threats,
    unseen: words(m).unseen,
    at: typeof review.submitted_at === 'string' ? review.submitted_at : undefined,
    source: 'review'
  }
}

/**
 * A `workflow_run` event after a review workflow finished (the review workflow does nothing; it
 * only starts this one, whose file — like every workflow_run workflow's — comes from the default
 * branch). The event does not carry the review, so the latest approving or changes-requesting
 * review on each open pull request at the run's head is read from the API. Anyone able to start
 * such a run can only make the action decide again on the current state.
 */
export async function approvalFromFinishedRun(
  octokit: GitHubClient,
  me: Identity,
  event: RunEvent
): Promise<ApprovalRequest[]> {
  const run = event.workflowRun
  if (run === undefined || run.event !== 'pull_request_review') return []
  const ctx = repositoryOf(event)
  const pulls = await openPullsAt(octokit, ctx.owner, ctx.repo, run.headSha, run.headRepository)
  const out: ApprovalRequest[] = []
  for (const pullNumber of pulls) {
    const reviews = await listReviews(octokit, ctx, pullNumber)
    // The latest decisive review (approved or changes requested): a comment-only review after
    // it must not hide it when two reviews arrive close together.
    const latest = reviews
      .filter(
        (r) =>
          (r.state === 'APPROVED' || r.state === 'CHANGES_REQUESTED' || r.state === 'DISMISSED') &&
          r.user?.login !== me.login
      )
      .sort((a, b) => b.id - a.id)[0]
    if (latest === undefined) continue
    // A dismissed review (the relay also runs on dismissals): the decision is rebuilt.
    const req =
      latest.state === 'DISMISSED'
        ? recheck(pullNumber, latest, latest.user)
        : fromReview(pullNumber, latest)
    if (req !== null) out.push(req)
  }
  return out
}
