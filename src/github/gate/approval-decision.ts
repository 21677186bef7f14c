/**
 * The decision rebuilt from the record: each person's latest action is checked as it stands now
 * (their permission now, the approvers of the policy, the authors and pushers of the pull
 * request, the head and diff it names), then counted (approval-count.ts). An approval that no
 * longer passes — its author lost write access, requested changes since, had the review
 * dismissed — is not counted; a writer whose latest action requests changes blocks the gate.
 */
import type { GitHubClient } from '../client/client.js'
import { approverCheck, writerCheck } from './approvers.js'
import { contributorCheck } from './contributors.js'
import type { PullFacts } from './contributors.js'
import { countApprovals } from './approval-count.js'
import type { ApprovalRules, Candidate, Count } from './approval-count.js'
import type { RecordedAction } from './approval-record.js'
import { shortSha } from './gate.js'
import type { Marker } from '../review/marker.js'
import type { ApprovalRequest } from './approval-request.js'

type Repo = { owner: string; repo: string }

/** What every approval is checked against. */
export interface DecisionFacts {
  repo: Repo
  pr: PullFacts & { user?: { login: string } | null }
  /** The latest report's marker (head and diff it approves). */
  latest: Marker
  rules: ApprovalRules
  /** The policy's `approvers` (empty: any writer). */
  approvers: string[]
  allowSelfApproval: boolean
  /** The report says the diff changes protected paths. */
  protectedChanged: boolean
  /** The threat review's verdict is suspicious or malicious: an approval must acknowledge it. */
  threatsFlagged?: boolean
  /** The review did not show the whole diff: an approval must name it in full and say `unseen`. */
  partial: boolean
}

/** What an approval names: who, on which commit, with which command words. */
export type ApprovalAct = Pick<
  RecordedAction,
  | 'login'
  | 'type'
  | 'source'
  | 'commitId'
  | 'diffPrefix'
  | 'acknowledgesProtected'
  | 'acknowledgesThreats'
  | 'unseen'
>

/** Null when the diff named (or not) is the latest report's, as the review requires. */
function diffCheck(act: ApprovalAct, f: DecisionFacts): string | null {
  const latest = f.latest
  const prefix = act.diffPrefix
  if (f.partial && latest.diffSha256 !== null && (prefix !== latest.diffSha256 || !act.unseen)) {
    return `the review did not show the whole diff ${shortSha(latest.diffSha256)}: read diff.patch of the run artifact, then comment \`/airlock approve <its full SHA-256> unseen\` (all 64 hex digits), which states that you approve lines the review did not show`
  }
  if (act.source !== 'comment' && prefix === undefined) return null
  const wanted = prefix ?? ''
  if (latest.diffSha256 === null)
    return wanted === 'none'
      ? null
      : 'the latest run changed nothing; approve it with `/airlock approve none`'
  if (!/^[0-9a-f]{7,64}$/.test(wanted))
    return `name the diff: \`/airlock approve ${shortSha(latest.diffSha256)}\` (at least 7 hex digits of its SHA-256)`
  if (!latest.diffSha256.startsWith(wanted))
    return `diff ${wanted} is not the latest report's diff (${shortSha(latest.diffSha256)})`
  return null
}

/**
 * Null when `act` is a valid approval now, else why not: a human with write, maintain or admin
 * permission now, one of the approvers, not the author or a contributor of the pull request
 * (unless allowed), on the current head, naming the latest report's diff.
 */
export async function approvalCheck(
  octokit: GitHubClient,
  act: ApprovalAct,
  f: DecisionFacts
): Promise<string | null> {
  const who = await personCheck(octokit, act, f)
  if (who !== null) return who
  const head = f.pr.head.sha
  if (act.commitId !== undefined && act.commitId !== head)
    return `the review was submitted on ${act.commitId.slice(0, 12)}, but the head is now ${head.slice(0, 12)}; review the current head`
  return diffCheck(act, f)
}

/**
 * Null when the person may approve this pull request now, else why not: a human with write,
 * maintain or admin permission now, one of the approvers, not the author or a contributor of the
 * pull request (unless allowed).
 */
export async function personCheck(
  octokit: GitHubClient,
  act: Pick<ApprovalAct, 'login' | 'type'>,
  f: Pick<DecisionFacts, 'repo' | 'pr' | 'approvers' | 'allowSelfApproval'>
): Promise<string | null> {
  const login = act.login
  const notWriter = await writerCheck(octokit, f.repo, act, 'approve')
  if (notWriter !== null) return notWriter
  const notApprover = await approverCheck(octokit, f.approvers, login)
  if (notApprover !== null) return notApprover
  if (!f.allowSelfApproval && f.pr.user?.login === login)
    return `@${login} opened this pull request; someone else must approve (or set allow-self-approval)`
  if (!f.allowSelfApproval) {
    const contributor = await contributorCheck(octokit, f.repo, f.pr, login)
    if (contributor !== null) return contributor
  }
  return null
}

export interface RecordDecision extends Count {
  /** Why each person's latest approval does not count (by login, lower case). */
  refused: Map<string, string>
}

/** The gate's decision from the latest action of each person (see the file's comment). */
export async function decideFromRecord(
  octokit: GitHubClient,
  actions: readonly RecordedAction[],
  f: DecisionFacts
): Promise<RecordDecision> {
  const candidates: Candidate[] = []
  const blockers: string[] = []
  const refused = new Map<string, string>()
  const short = shortSha(f.latest.diffSha256)
  for (const a of actions) {
    if (a.kind === 'dismissed') continue
    if (a.kind === 'withdraw') {
      // Only a request for changes from someone who can write now holds the gate.
      if ((await writerCheck(octokit, f.repo, a, 'revoke')) === null) blockers.push(a.login)
      continue
    }
    const why = await approvalCheck(octokit, a, f)
    if (why !== null) {
      refused.set(a.login.toLowerCase(), why)
      continue
    }
    const protectedApprover =
      f.rules.protectedApprovers.length > 0 &&
      (await approverCheck(octokit, f.rules.protectedApprovers, a.login)) === null
    candidates.push({
      login: a.login,
      diffPrefix: short,
      acknowledges: a.acknowledgesProtected,
      acknowledgesThreats: a.acknowledgesThreats,
      protectedApprover,
      author: f.pr.user?.login === a.login
    })
  }
  return {
    ...countApprovals(
      candidates,
      blockers,
      f.rules,
      f.protectedChanged,
      short,
      f.threatsFlagged === true
    ),
    refused
  }
}

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

export /**
 * Null when the event's own approval is one the record counts, else why not (the reply): the
 * checks of every approval, and that it is newer than the report it approves (a queued job or a
 * re-run replays an old event).
 */
async function ownApprovalCheck(
  octokit: GitHubClient,
  req: ApprovalRequest,
  report: { id: number; submittedAt: string | null },
  facts: DecisionFacts
): Promise<string | null> {
  if (req.source === 'review' && req.reviewId !== undefined && req.reviewId < report.id)
    return 'the review is older than the latest report; review the current report and approve again'
  const at = req.at
  if (at === undefined || Number.isNaN(Date.parse(at)))
    return 'the approval carries no time, so it cannot be told from a replay'
  const stale = replayCheck(at, report.submittedAt, 'the latest report was posted')
  if (stale !== null) return stale
  return approvalCheck(
    octokit,
    {
      login: req.actor.login,
      type: req.actor.type,
      source: req.source,
      commitId: req.commitId,
      diffPrefix: req.diffPrefix,
      acknowledgesProtected: req.acknowledgesProtected === true,
      acknowledgesThreats: req.acknowledgesThreats === true,
      unseen: req.unseen === true
    },
    facts
  )
}
