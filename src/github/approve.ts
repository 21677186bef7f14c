import type { Logger } from '../log.js'
import { bool, list } from '../input-read.js'
import { escapeMarkdown } from '../report/escape.js'
import type { GitHubClient } from './client.js'
import { hasStatus } from './client.js'
import type { EventContext } from './context.js'
import { asObject, eventPullNumber } from './context.js'
import type { StatusPayload } from './gate.js'
import { currentGate, gateApproved, shortSha } from './gate.js'
import { isSuperseded, parseMarker } from './marker.js'
import type { Marker } from './marker.js'
import type { Identity, Writes } from './writes.js'

/** An approval request read from the event, before any check. */
export interface ApprovalRequest {
  pullNumber: number
  actor: { login: string; type: string }
  /** The commit a review was submitted on (reviews only). */
  commitId?: string
  /** The diff SHA-256 prefix the approver named (`/airlock approve <prefix>`), if any. */
  diffPrefix?: string
  source: 'review' | 'comment'
}

const COMMAND = /^\s*\/airlock\s+approve(?:[ \t]+(\S+))?[ \t]*$/m

/**
 * Reads an approval from the event: a submitted review in state `approved`, or a new comment on a
 * pull request whose line is `/airlock approve <diff-sha-prefix>`. Anything else is not an
 * approval (null) and the mode does nothing.
 */
export function approvalRequest(ctx: EventContext): ApprovalRequest | null {
  const p = ctx.payload
  const pullNumber = eventPullNumber(ctx)
  if (pullNumber === undefined) return null
  if (ctx.eventName === 'pull_request_review') {
    const review = asObject(p.review)
    if (p.action !== 'submitted' || !review || String(review.state).toLowerCase() !== 'approved')
      return null
    const user = asObject(review.user)
    if (!user || typeof user.login !== 'string') return null
    const m = typeof review.body === 'string' ? COMMAND.exec(review.body) : null
    return {
      pullNumber,
      actor: { login: user.login, type: String(user.type ?? '') },
      commitId: typeof review.commit_id === 'string' ? review.commit_id : undefined,
      diffPrefix: m?.[1],
      source: 'review'
    }
  }
  if (ctx.eventName === 'issue_comment') {
    const comment = asObject(p.comment)
    if (p.action !== 'created' || !comment || typeof comment.body !== 'string') return null
    const m = COMMAND.exec(comment.body)
    if (!m) return null
    const user = asObject(comment.user)
    if (!user || typeof user.login !== 'string') return null
    return {
      pullNumber,
      actor: { login: user.login, type: String(user.type ?? '') },
      diffPrefix: m[1] ?? '',
      source: 'comment'
    }
  }
  return null
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

export interface ApproveOptions {
  gateContext: string
  /** The `allow-self-approval` input; when not given, the policy file's setting (default false). */
  allowSelfApproval: boolean | undefined
  targetUrl?: string
  /**
   * The policy file's settings at the pull request's base commit (never its head): `approvers`
   * and `allow-self-approval` apply. Throws when the file is invalid: the approval is refused.
   */
  policyAt?: (baseSha: string) => Promise<Record<string, string>>
}

export type ApproveResult =
  { approved: true; status: StatusPayload; marker: Marker } | { approved: false; reason: string }

const WRITE_ROLES = new Set(['admin', 'maintain', 'write'])

/**
 * Decides an approval. Fail-closed: every check must pass, in this order — a human (not a bot),
 * with write, maintain or admin permission, not the author (unless allowed), approving the pull
 * request's current head, for which the action's own latest report exists, naming its diff, while
 * the gate is pending for that diff.
 */
export async function decideApproval(
  octokit: GitHubClient,
  me: Identity,
  ctx: EventContext,
  req: ApprovalRequest,
  options: ApproveOptions
): Promise<ApproveResult> {
  const repo = { owner: ctx.owner, repo: ctx.repo }
  const refuse = (reason: string): ApproveResult => ({ approved: false, reason })
  const login = req.actor.login
  if (req.actor.type === 'Bot' || /\[bot\]$/i.test(login)) {
    return refuse(`@${login} is a bot; only people can approve`)
  }
  let role: string
  try {
    const perm = (
      await octokit.rest.repos.getCollaboratorPermissionLevel({ ...repo, username: login })
    ).data
    role = perm.role_name && WRITE_ROLES.has(perm.role_name) ? perm.role_name : perm.permission
  } catch (error) {
    if (hasStatus(error, 404)) return refuse(`@${login} is not a collaborator of this repository`)
    throw error
  }
  if (!WRITE_ROLES.has(role)) {
    return refuse(`@${login} has ${role} permission; approving needs write, maintain or admin`)
  }
  const pr = (await octokit.rest.pulls.get({ ...repo, pull_number: req.pullNumber })).data
  if (pr.state !== 'open') return refuse(`pull request #${req.pullNumber} is not open`)
  let policy: Record<string, string> = {}
  if (options.policyAt) {
    try {
      policy = await options.policyAt(pr.base.sha)
    } catch (error) {
      return refuse(`the policy file at the base commit cannot be used: ${errorText(error)}`)
    }
  }
  const approvers = list(policy.approvers).map((a) => a.replace(/^@/, '').toLowerCase())
  if (approvers.length > 0 && !approvers.includes(login.toLowerCase())) {
    return refuse(`@${login} is not one of the approvers named in .github/airlock.yml`)
  }
  const allowSelfApproval =
    options.allowSelfApproval ?? bool('allow-self-approval', policy['allow-self-approval'], false)
  if (!allowSelfApproval && pr.user?.login === login) {
    return refuse(
      `@${login} opened this pull request; someone else must approve (or set allow-self-approval)`
    )
  }
  const head = pr.head.sha
  if (req.commitId !== undefined && req.commitId !== head) {
    return refuse(
      `the review was submitted on ${req.commitId.slice(0, 12)}, but the head is now ${head.slice(0, 12)}; review the current head`
    )
  }
  const reviews = await octokit.paginate(octokit.rest.pulls.listReviews, {
    ...repo,
    pull_number: req.pullNumber,
    per_page: 100
  })
  const own = reviews
    .filter((r) => r.user?.login === me.login && r.state !== 'PENDING')
    .map((r) => ({ id: r.id, body: r.body ?? '', marker: parseMarker(r.body) }))
    .filter((r) => r.marker !== null && !isSuperseded(r.body))
    .sort((a, b) => b.id - a.id)
  const latest = own[0]?.marker
  if (!latest) return refuse('there is no Agent Airlock report on this pull request to approve')
  if (latest.headSha !== head) {
    return refuse(
      `the latest report is for ${latest.headSha.slice(0, 12)}, but the head is now ${head.slice(0, 12)}; wait for the new run`
    )
  }
  const prefix = req.diffPrefix
  if (req.source === 'comment' || prefix !== undefined) {
    const wanted = prefix ?? ''
    if (latest.diffSha256 === null) {
      if (wanted !== 'none')
        return refuse('the latest run changed nothing; approve it with `/airlock approve none`')
    } else if (!/^[0-9a-f]{7,64}$/.test(wanted)) {
      return refuse(
        `name the diff: \`/airlock approve ${shortSha(latest.diffSha256)}\` (at least 7 hex digits of its SHA-256)`
      )
    } else if (!latest.diffSha256.startsWith(wanted)) {
      return refuse(
        `diff ${wanted} is not the latest report's diff (${shortSha(latest.diffSha256)})`
      )
    }
  }
  const gate = await currentGate(octokit, ctx.owner, ctx.repo, head, options.gateContext)
  if (gate === null) return refuse(`no ${options.gateContext} status on ${head.slice(0, 12)} yet`)
  if (gate.state === 'success') return refuse('this head is already approved')
  if (gate.state !== 'pending' || !(gate.description ?? '').includes(shortSha(latest.diffSha256))) {
    return refuse(
      `the gate is ${gate.state} (${gate.description ?? ''}); only a pending gate for this diff can be approved`
    )
  }
  return {
    approved: true,
    marker: latest,
    status: gateApproved(login, latest.diffSha256, options.gateContext, options.targetUrl)
  }
}

/** Applies the decision: the success status, or a short escaped reply saying why not. */
export async function recordApproval(
  writes: Writes,
  ctx: EventContext,
  req: ApprovalRequest,
  result: ApproveResult,
  log: Logger
): Promise<void> {
  const repo = { owner: ctx.owner, repo: ctx.repo }
  if (result.approved) {
    log.info(`approved: ${result.status.description}`)
    await writes.send(
      'POST /repos/{owner}/{repo}/statuses/{sha}',
      { ...repo, sha: result.marker.headSha, ...result.status },
      null
    )
    return
  }
  log.warn(`approval not recorded: ${result.reason}`)
  await writes.send(
    'POST /repos/{owner}/{repo}/issues/{issue_number}/comments',
    {
      ...repo,
      issue_number: req.pullNumber,
      body: `Agent Airlock: approval not recorded: ${escapeMarkdown(result.reason)}`
    },
    null
  )
}
