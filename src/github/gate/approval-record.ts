/**
 * The record an approval decision is rebuilt from, every time: the pull request's reviews and
 * `/airlock approve` comments since the report, and of each person only the latest action — an
 * approval, a request for changes (which withdraws an approval), or a dismissed review (which
 * withdraws what that review said). Nothing is read from a status: anyone with `statuses: write`
 * can write one.
 */
import type { GitHubClient } from '../client/client.js'
import { listReviews } from '../client/pulls.js'
import type { Identity } from '../client/writes.js'
import { approvalCommand } from './approval-request.js'

type Repo = { owner: string; repo: string }

/** One person's action on the pull request, as the record states it. */
export interface RecordedAction {
  login: string
  type: string
  /** withdraw: a review requesting changes; dismissed: a review someone dismissed. */
  kind: 'approve' | 'withdraw' | 'dismissed'
  source: 'review' | 'comment'
  /** When it was given (a review's `submitted_at`, a comment's `created_at`). */
  at: string
  id: number
  /** The commit a review was submitted on. */
  commitId?: string
  /** The diff prefix the command named (a review's body may name one too). */
  diffPrefix?: string
  acknowledgesProtected: boolean
  acknowledgesThreats: boolean
  unseen: boolean
}

/** The report the decision is about: its review's id and when it was posted. */
export interface ReportPost {
  id: number
  submittedAt: string | null
}

/** GitHub states times to the second: an action within the report's second counts. */
function notBefore(at: string, since: string | null): boolean {
  if (since === null) return true
  const floor = Date.parse(since)
  const given = Date.parse(at)
  if (Number.isNaN(given)) return false
  return Number.isNaN(floor) || given >= Math.floor(floor / 1000) * 1000
}

const RANK = { approve: 0, dismissed: 1, withdraw: 2 } as const

/**
 * Of each person (by login, ignoring case), the latest action given at or after the report:
 * ordered by time, and within the same instant a withdrawal after an approval (fail closed).
 * The action's own identity is no person here.
 */
export async function latestActions(
  octokit: GitHubClient,
  repo: Repo,
  pullNumber: number,
  me: Identity,
  report: ReportPost
): Promise<RecordedAction[]> {
  const reviews = await listReviews(octokit, repo, pullNumber)
  const comments = await octokit.paginate(octokit.rest.issues.listComments, {
    ...repo,
    issue_number: pullNumber,
    per_page: 100
  })
  const actions: RecordedAction[] = []
  for (const r of reviews) {
    const login = r.user?.login
    if (login === undefined || login === me.login || r.id <= report.id) continue
    const kind =
      r.state === 'APPROVED'
        ? 'approve'
        : r.state === 'CHANGES_REQUESTED'
          ? 'withdraw'
          : r.state === 'DISMISSED'
            ? 'dismissed'
            : null
    const at = r.submitted_at ?? null
    if (kind === null || at === null || !notBefore(at, report.submittedAt)) continue
    const cmd = approvalCommand(r.body)
    actions.push({
      login,
      type: r.user?.type ?? '',
      kind,
      source: 'review',
      at,
      id: r.id,
      commitId: r.commit_id ?? undefined,
      ...(cmd !== null ? { diffPrefix: cmd.diffPrefix } : {}),
      acknowledgesProtected: cmd?.protected === true,
      acknowledgesThreats: cmd?.threats === true,
      unseen: cmd?.unseen === true
    })
  }
  for (const c of comments) {
    const login = c.user?.login
    if (login === undefined || login === me.login) continue
    if (!notBefore(c.created_at, report.submittedAt)) continue
    const cmd = approvalCommand(c.body)
    if (cmd === null) continue
    actions.push({
      login,
      type: c.user?.type ?? '',
      kind: 'approve',
      source: 'comment',
      at: c.created_at,
      id: c.id,
      diffPrefix: cmd.diffPrefix,
      acknowledgesProtected: cmd.protected,
      acknowledgesThreats: cmd.threats,
      unseen: cmd.unseen
    })
  }
  actions.sort(
    (a, b) =>
      Date.parse(a.at) - Date.parse(b.at) ||
      RANK[a.kind] - RANK[b.kind] ||
      (a.source === b.source ? a.id - b.id : 0)
  )
  const latest = new Map<string, RecordedAction>()
  for (const a of actions) latest.set(a.login.toLowerCase(), a)
  return [...latest.values()]
}
