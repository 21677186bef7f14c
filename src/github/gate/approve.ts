import type { Logger } from '../../log.js'
import { bool, list } from '../../input-read.js'
import { escapeProductText } from '../../report/escape.js'
import type { ApprovalRequest } from './approval-request.js'
import { approverCheck, errorText, writerCheck } from './approvers.js'
import type { GitHubClient } from '../client/client.js'
import { contributorCheck } from './contributors.js'
import type { RunEvidence } from '../../report/evidence-folder.js'
import type { StatusPayload } from './gate.js'
import { currentGate, gateApproved, gatePartly, gateRevoked, shortSha } from './gate.js'
import { approvalRules, countApproval, tallyOf } from './approval-count.js'
import type { ApprovalRules } from './approval-count.js'
import { sameEvidence } from '../review/marker.js'
import { latestReport } from '../review/reports.js'
import type { Marker } from '../review/marker.js'
import { openPullsAt } from '../client/pulls.js'
import type { Identity, Writes } from '../client/writes.js'

export interface ApproveOptions {
  gateContext: string
  /** The `allow-self-approval` input; when not given, the policy file's setting (default false). */
  allowSelfApproval: boolean | undefined
  targetUrl?: string
  /**
   * The run's evidence, when approve was handed it (already checked against its provenance
   * statement): it must be the evidence of the latest report (same run, head and diff).
   */
  evidence?: RunEvidence
  /**
   * The policy file's settings at the pull request's base commit (never its head): `approvers`
   * and `allow-self-approval` apply. Throws when the file is invalid: the approval is refused.
   */
  policyAt?: (baseSha: string) => Promise<Record<string, string>>
}

export type ApproveResult =
  | { approved: true; status: StatusPayload; marker: Marker }
  | {
      approved: false
      reason: string
      status?: StatusPayload
      marker?: Marker
      /** The approval was valid but not enough (required-approvals, protected paths). */
      pending?: true
    }

type Repo = { owner: string; repo: string }

/**
 * Null when the approval was given at or after `since` (both as GitHub states them), else the
 * reason it was not. GitHub states times to the second: an approval within the same second as
 * the report counts.
 */
function replayCheck(at: string, since: string | null, what: string): string | null {
  if (since === null) return null
  const given = Date.parse(at)
  const floor = Date.parse(since)
  if (Number.isNaN(floor) || given >= Math.floor(floor / 1000) * 1000) return null
  return `the approval (${at}) was written before ${what} (${since}); a comment or review older than what it approves is not an approval of it — review it and approve again`
}

/**
 * Decides an approval. Fail-closed: every check must pass, in this order — a human (not a bot),
 * with write, maintain or admin permission, one of the approvers when the policy names them, not
 * the author (unless allowed), approving the pull request's current head, for which the action's
 * own latest report exists, naming its diff (a review must be newer than that report), while the
 * action's own gate status is pending for that diff, and every other open pull request on the
 * same head commit has that same diff as its latest report.
 */
export async function decideApproval(
  octokit: GitHubClient,
  me: Identity,
  ctx: Repo,
  req: ApprovalRequest,
  options: ApproveOptions
): Promise<ApproveResult> {
  if (req.kind === 'revoke') return decideRevocation(octokit, me, ctx, req, options)
  const repo = { owner: ctx.owner, repo: ctx.repo }
  const refuse = (reason: string): ApproveResult => ({ approved: false, reason })
  const login = req.actor.login
  const notWriter = await writerCheck(octokit, repo, req.actor, 'approve')
  if (notWriter !== null) return refuse(notWriter)
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
  const notApprover = await approverCheck(octokit, list(policy.approvers), login)
  if (notApprover !== null) return refuse(notApprover)
  let rules: ApprovalRules
  try {
    rules = approvalRules(policy)
  } catch (error) {
    return refuse(`the policy file at the base commit cannot be used: ${errorText(error)}`)
  }
  const allowSelfApproval =
    options.allowSelfApproval ?? bool('allow-self-approval', policy['allow-self-approval'], false)
  if (!allowSelfApproval && pr.user?.login === login) {
    return refuse(
      `@${login} opened this pull request; someone else must approve (or set allow-self-approval)`
    )
  }
  if (!allowSelfApproval) {
    const contributor = await contributorCheck(octokit, repo, pr, login)
    if (contributor !== null) return refuse(contributor)
  }
  const head = pr.head.sha
  if (req.commitId !== undefined && req.commitId !== head) {
    return refuse(
      `the review was submitted on ${req.commitId.slice(0, 12)}, but the head is now ${head.slice(0, 12)}; review the current head`
    )
  }
  const report = await latestReport(octokit, repo, req.pullNumber, me)
  const latest = report?.marker
  if (!report || !latest)
    return refuse('there is no Agent Airlock report on this pull request to approve')
  if (latest.headSha !== head) {
    return refuse(
      `the latest report is for ${latest.headSha.slice(0, 12)}, but the head is now ${head.slice(0, 12)}; wait for the new run`
    )
  }
  const given = options.evidence?.report
  if (given !== undefined && !sameEvidence(latest, given)) {
    return refuse(
      `the evidence in output-dir (run ${given.runId}, diff ${shortSha(given.diffSha256)}) is not the latest report's evidence (run ${latest.runId}, diff ${shortSha(latest.diffSha256)})`
    )
  }
  if (req.source === 'review' && req.reviewId !== undefined && req.reviewId < report.id) {
    return refuse(
      'the review is older than the latest report; review the current report and approve again'
    )
  }
  // A queued job or a re-run replays an old event: the approval must be newer than the report.
  const at = req.at
  if (at === undefined || Number.isNaN(Date.parse(at)))
    return refuse('the approval carries no time, so it cannot be told from a replay')
  const stale = replayCheck(at, report.submittedAt, 'the latest report was posted')
  if (stale !== null) return refuse(stale)
  const prefix = req.diffPrefix
  // A review that did not show the whole diff is approved only by a statement saying so, naming
  // the whole diff: never an approval of lines nobody was shown, without a word.
  const partial = latest.partial === true && latest.diffSha256 !== null
  if (partial && (prefix !== latest.diffSha256 || req.unseen !== true)) {
    return refuse(
      `the review did not show the whole diff ${shortSha(latest.diffSha256)}: read diff.patch of the run artifact, then comment \`/airlock approve <its full SHA-256> unseen\` (all 64 hex digits), which states that you approve lines the review did not show`
    )
  }
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
  const gate = await currentGate(octokit, ctx.owner, ctx.repo, head, options.gateContext, me)
  if (gate === null) return refuse(`no ${options.gateContext} status on ${head.slice(0, 12)} yet`)
  if (gate.state === 'success') return refuse('this head is already approved')
  if (gate.state !== 'pending' || !(gate.description ?? '').includes(shortSha(latest.diffSha256))) {
    return refuse(
      `the gate is ${gate.state} (${gate.description ?? ''}); only a pending gate for this diff can be approved`
    )
  }
  // ...and newer than the pending state it ends (a new run's, or a revocation's).
  const replayed = replayCheck(at, gate.createdAt, 'the gate was last set pending')
  if (replayed !== null) return refuse(replayed)
  // A status belongs to the commit, not to the pull request: every open pull request with this
  // head would turn green. Each must have this same diff as its latest report.
  for (const other of await openPullsAt(octokit, ctx.owner, ctx.repo, head)) {
    if (other === req.pullNumber) continue
    const theirs = (await latestReport(octokit, repo, other, me))?.marker
    if (theirs?.headSha !== head || theirs.diffSha256 !== latest.diffSha256) {
      return refuse(
        `head ${head.slice(0, 12)} is also the head of pull request #${other}, whose latest report is ${theirs ? `for diff ${shortSha(theirs.diffSha256)}` : 'missing'}; a status applies to the commit, so it is approved only for a diff every such pull request shares`
      )
    }
    const otherPr = (await octokit.rest.pulls.get({ ...repo, pull_number: other })).data
    if (!allowSelfApproval && otherPr.user?.login === login) {
      return refuse(
        `@${login} opened pull request #${other}, which has the same head; someone else must approve`
      )
    }
  }
  return countedApproval(octokit, req, options, {
    rules,
    latest,
    gateDescription: gate.description,
    author: pr.user?.login === login,
    partial
  })
}

/**
 * An approval that passed every check, counted: the gate turns green when enough distinct people
 * approved and a change to protected paths was acknowledged; else it stays pending with the tally
 * so far, and the reply says what is missing.
 */
async function countedApproval(
  octokit: GitHubClient,
  req: ApprovalRequest,
  options: ApproveOptions,
  at: {
    rules: ApprovalRules
    latest: Marker
    gateDescription: string | null
    author: boolean
    /** The review did not show the whole diff (the approval said `unseen`). */
    partial: boolean
  }
): Promise<ApproveResult> {
  const { rules, latest } = at
  const login = req.actor.login
  const short = shortSha(latest.diffSha256)
  const tally = tallyOf(at.gateDescription, short)
  const fromEvidence = options.evidence?.full.policy?.protected ?? []
  if (fromEvidence.length > 0) tally.protectedChanged = true
  const protectedApprover =
    rules.protectedApprovers.length > 0 &&
    (await approverCheck(octokit, rules.protectedApprovers, login)) === null
  const count = countApproval(tally, rules, {
    login,
    diffPrefix: short,
    acknowledges: req.acknowledgesProtected === true,
    protectedApprover,
    author: at.author
  })
  if (count.done) {
    return {
      approved: true,
      marker: latest,
      status: gateApproved(
        login,
        latest.diffSha256,
        options.gateContext,
        options.targetUrl,
        at.partial
      )
    }
  }
  return {
    approved: false,
    pending: true,
    reason: count.reason,
    ...(count.counted
      ? {
          marker: latest,
          status: gatePartly(
            count.tally,
            rules.required,
            short,
            options.gateContext,
            options.targetUrl
          )
        }
      : {})
  }
}

/**
 * A writer's `CHANGES_REQUESTED` review on the current head takes back an approval of the latest
 * report: the gate goes back to pending (an approval after it restores it).
 */
async function decideRevocation(
  octokit: GitHubClient,
  me: Identity,
  ctx: Repo,
  req: ApprovalRequest,
  options: ApproveOptions
): Promise<ApproveResult> {
  const repo = { owner: ctx.owner, repo: ctx.repo }
  const notWriter = await writerCheck(octokit, repo, req.actor, 'revoke')
  if (notWriter !== null) return { approved: false, reason: notWriter }
  const pr = (await octokit.rest.pulls.get({ ...repo, pull_number: req.pullNumber })).data
  const head = pr.head.sha
  const latest = (await latestReport(octokit, repo, req.pullNumber, me))?.marker
  const gate = await currentGate(octokit, ctx.owner, ctx.repo, head, options.gateContext, me)
  if (!latest || latest.headSha !== head || gate?.state !== 'success') {
    return { approved: false, reason: 'changes requested; the gate was not green, nothing to undo' }
  }
  return {
    approved: false,
    reason: `@${req.actor.login} requested changes: the approval is withdrawn`,
    marker: latest,
    status: gateRevoked(req.actor.login, latest.diffSha256, options.gateContext, options.targetUrl)
  }
}

/**
 * Applies the decision: the success status, the pending status of a revocation, or a short
 * escaped reply saying why not (not for reviews the action merely read after a workflow_run, and
 * never for a revocation with nothing to undo).
 */
export async function recordApproval(
  writes: Writes,
  ctx: Repo,
  req: ApprovalRequest,
  result: ApproveResult,
  log: Logger,
  reply = true
): Promise<void> {
  const repo = { owner: ctx.owner, repo: ctx.repo }
  if (result.status !== undefined && result.marker !== undefined) {
    log.info(`${result.approved ? 'approved' : 'revoked'}: ${result.status.description}`)
    await writes.send(
      'POST /repos/{owner}/{repo}/statuses/{sha}',
      { ...repo, sha: result.marker.headSha, ...result.status },
      null
    )
    if (result.approved || result.pending !== true) return
  }
  if (result.approved) return
  const what = result.pending === true ? 'approval counted' : 'approval not recorded'
  log.warn(`${what}: ${result.reason}`)
  if (req.kind === 'revoke' || !reply) return
  await writes.send(
    'POST /repos/{owner}/{repo}/issues/{issue_number}/comments',
    {
      ...repo,
      issue_number: req.pullNumber,
      body: `Agent Airlock: ${what}: ${escapeProductText(result.reason)}`
    },
    null
  )
}
