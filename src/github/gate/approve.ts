import type { Logger } from '../../log.js'
import { bool, list } from '../../input-read.js'
import { escapeProductText } from '../../report/escape.js'
import type { ApprovalRequest } from './approval-request.js'
import { errorText } from './approvers.js'
import type { GitHubClient } from '../client/client.js'
import { decideFromRecord, ownApprovalCheck, personCheck } from './approval-decision.js'
import type { DecisionFacts, RecordDecision } from './approval-decision.js'
import { latestActions } from './approval-record.js'
import type { RunEvidence } from '../../report/evidence-folder.js'
import type { CurrentStatus, StatusPayload } from './gate.js'
import { currentGate, gateApproved, gatePartly, shortSha } from './gate.js'
import { approvalRules } from './approval-count.js'
import type { ApprovalRules } from './approval-count.js'
import { sameEvidence } from '../review/marker.js'
import type { Marker } from '../review/marker.js'
import { latestReport } from '../review/reports.js'
import { sharedHead } from './shared-head.js'
import type { Identity, Writes } from '../client/writes.js'

type Repo = { owner: string; repo: string }

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

/**
 * Decides after an approval, a request for changes or a dismissal. Fail-closed. First what the
 * decision needs: the pull request open, the policy at its base readable, the action's own latest
 * report for the current head (the evidence handed to approve, if any, is that report's), the
 * action's own gate status on the head not failed, and every other open pull request on the same
 * head with the same diff as its latest report. Then the decision is rebuilt from the record
 * (approval-decision.ts); the event's own approval gets the reply saying why it does not count.
 */
export async function decideApproval(
  octokit: GitHubClient,
  me: Identity,
  ctx: Repo,
  req: ApprovalRequest,
  options: ApproveOptions
): Promise<ApproveResult> {
  const repo = { owner: ctx.owner, repo: ctx.repo }
  const refuse = (reason: string): ApproveResult => ({ approved: false, reason })
  const login = req.actor.login
  const pr = (await octokit.rest.pulls.get({ ...repo, pull_number: req.pullNumber })).data
  if (pr.state !== 'open') return refuse(`pull request #${req.pullNumber} is not open`)
  let policy: Record<string, string> = {}
  let rules: ApprovalRules
  try {
    if (options.policyAt) policy = await options.policyAt(pr.base.sha)
    rules = approvalRules(policy)
  } catch (error) {
    return refuse(`the policy file at the base commit cannot be used: ${errorText(error)}`)
  }
  const allowSelfApproval =
    options.allowSelfApproval ?? bool('allow-self-approval', policy['allow-self-approval'], false)
  const approvers = list(policy.approvers)
  // Who is approving first: the reply names the reason that concerns the person.
  if (req.kind === 'approve') {
    const who = await personCheck(octokit, req.actor, { repo, pr, approvers, allowSelfApproval })
    if (who !== null) return refuse(who)
  }
  const head = pr.head.sha
  if (req.kind === 'approve' && req.commitId !== undefined && req.commitId !== head) {
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
  const gate = await currentGate(octokit, ctx.owner, ctx.repo, head, options.gateContext, me)
  if (gate === null) return refuse(`no ${options.gateContext} status on ${head.slice(0, 12)} yet`)
  if (gate.state !== 'pending' && gate.state !== 'success') {
    return refuse(
      `the gate is ${gate.state} (${gate.description ?? ''}); only a pending gate for this diff can be approved`
    )
  }
  const others = await sharedHead(
    octokit,
    me,
    ctx,
    req.pullNumber,
    head,
    latest,
    login,
    allowSelfApproval
  )
  if (others !== null) return refuse(others)
  const facts: DecisionFacts = {
    repo,
    pr,
    latest,
    rules,
    approvers,
    allowSelfApproval,
    // The report states it (its marker, or the evidence handed to approve); a marker of an
    // earlier version that does not say counts as a protected change (fail closed).
    protectedChanged:
      latest.protected !== false || (options.evidence?.full.policy?.protected ?? []).length > 0,
    partial: latest.partial === true && latest.diffSha256 !== null,
    // The threat review flagged the diff (its marker, or the evidence handed to approve).
    threatsFlagged:
      latest.threats === true ||
      (options.evidence?.full.threatReview?.verdict ?? 'clean') !== 'clean'
  }
  const own = req.kind === 'approve' ? await ownApprovalCheck(octokit, req, report, facts) : null
  if (own !== null) return refuse(own)
  const actions = await latestActions(octokit, repo, req.pullNumber, me, report)
  const decision = await decideFromRecord(octokit, actions, facts)
  return gateFor(decision, gate, req, facts, options)
}

/**
 * The status the decision asks for — success when the record is enough, pending with the tally
 * otherwise — written only when it differs from the gate's current one; and the reply to the
 * event's approval when it is not (yet) enough.
 */
function gateFor(
  decision: RecordDecision,
  gate: CurrentStatus,
  req: ApprovalRequest,
  facts: DecisionFacts,
  options: ApproveOptions
): ApproveResult {
  const latest = facts.latest
  const short = shortSha(latest.diffSha256)
  const approver = decision.tally.approvers.includes(req.actor.login)
    ? req.actor.login
    : (decision.tally.approvers.at(-1) ?? req.actor.login)
  const status = decision.done
    ? gateApproved(
        approver,
        latest.diffSha256,
        options.gateContext,
        options.targetUrl,
        facts.partial
      )
    : gatePartly(
        decision.tally,
        facts.rules.required,
        short,
        options.gateContext,
        options.targetUrl
      )
  const changed = status.state !== gate.state || status.description !== (gate.description ?? '')
  const write = changed ? { status, marker: latest } : {}
  if (decision.done) {
    if (!changed)
      return {
        approved: false,
        reason:
          req.kind === 'approve'
            ? 'this head is already approved'
            : `the gate stays ${gate.state} (${gate.description ?? ''})`
      }
    return { approved: true, status, marker: latest }
  }
  const reason =
    req.kind === 'approve'
      ? `the gate stays pending: ${decision.missing.join('; ')}`
      : `${req.kind === 'revoke' ? `@${req.actor.login} requested changes` : 'a review was dismissed'}: the gate is ${status.state} (${status.description})`
  return { approved: false, pending: true, reason, ...write }
}

/**
 * Applies the decision: the status it asks for (success, or pending with the tally), and a short
 * escaped reply to an approval that is not (yet) enough or was refused — not for reviews the
 * action merely read after a workflow_run, and never for a request for changes or a dismissal.
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
    log.info(`gate ${result.status.state}: ${result.status.description}`)
    await writes.send(
      'POST /repos/{owner}/{repo}/statuses/{sha}',
      { ...repo, sha: result.marker.headSha, ...result.status },
      null
    )
  }
  if (result.approved) return
  const what = result.pending === true ? 'approval counted' : 'approval not recorded'
  log.warn(`${req.kind === 'approve' ? what : req.kind}: ${result.reason}`)
  if (req.kind !== 'approve' || !reply) return
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
