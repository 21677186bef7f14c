/**
 * Approvals that mean more: `required-approvals: N` distinct people, and an acknowledgement of
 * changes to protected paths. Pure: it counts the people whose latest action on the pull request
 * (read from the record each time: approval-record.ts) is a valid approval, and the writers whose
 * latest action requests changes (each of them blocks the gate, as on GitHub).
 *
 * The gate's description shows the tally to people, for example
 * `approvals 1/2 by @alice for diff 0123456789ab; protected` (a protected change not yet
 * acknowledged). It is never read back: anyone with `statuses: write` can write a status. GitHub
 * cuts descriptions at 140 characters, which is why at most {@link MAX_REQUIRED_APPROVALS}
 * approvals can be required.
 */
import { list } from '../../input-read.js'
import { ConfigurationError } from '../../errors.js'
import { ACKNOWLEDGE } from '../../report/protected-step.js'

/** The most approvals a policy may require (the tally must fit in a status description). */
export const MAX_REQUIRED_APPROVALS = 3

/** The word that acknowledges the threat review's findings: `/airlock approve <prefix> threats`. */
export const THREATS = 'threats'

/** Where the gate's description says that protected paths changed (for people; never read). */
export const PROTECTED_NOTE = '; protected paths changed'

export interface ApprovalRules {
  /** Distinct people whose approval the gate needs (never the author, never a bot). */
  required: number
  /** When named, only an approval from one of them acknowledges protected paths. */
  protectedApprovers: string[]
}

/** The rules from the policy file's values (`required-approvals`, `protected-approvers`). */
export function approvalRules(policy: Record<string, string>): ApprovalRules {
  const raw = policy['required-approvals']
  const required = raw === undefined ? 1 : Number(raw)
  if (!Number.isInteger(required) || required < 1 || required > MAX_REQUIRED_APPROVALS) {
    throw new ConfigurationError(
      'required-approvals',
      `${JSON.stringify(raw)} is not a whole number from 1 to ${MAX_REQUIRED_APPROVALS}`
    )
  }
  return { required, protectedApprovers: list(policy['protected-approvers']) }
}

/** The approvals counted for one diff, from the record. */
export interface Tally {
  approvers: string[]
  /** The diff changes protected paths (the report says so). */
  protectedChanged: boolean
  /** A counted approval acknowledges the protected paths. */
  acknowledged: boolean
  /** Writers whose latest action requests changes: each blocks the gate. */
  blockers: string[]
  /** The threat review flagged the diff, and whether a counted approval acknowledged it. */
  threats?: { acknowledged: boolean }
}

/** The gate's description for a tally that is not yet enough. */
export function tallyDescription(tally: Tally, required: number, short: string): string {
  const who = tally.approvers.map((a) => `@${a}`).join(' ')
  const note =
    (tally.protectedChanged ? (tally.acknowledged ? '; protected ok' : '; protected') : '') +
    (tally.threats ? (tally.threats.acknowledged ? '; threats ok' : '; threats') : '')
  const blocked =
    tally.blockers.length > 0
      ? `changes requested by ${tally.blockers.map((b) => `@${b}`).join(' ')}; `
      : ''
  if (tally.approvers.length === 0)
    return `${blocked}awaiting approval of diff ${short}${tally.protectedChanged ? PROTECTED_NOTE : ''}`
  return `${blocked}approvals ${tally.approvers.length}/${required} by ${who} for diff ${short}${note}`
}

/** One person's approval that passed every check of its own (approval-decision.ts). */
export interface Candidate {
  login: string
  /** The prefix of the diff being approved, as the approval command names it. */
  diffPrefix: string
  /** The approval says `protected` after the diff prefix. */
  acknowledges: boolean
  /** The approval says `threats` after the diff prefix. */
  acknowledgesThreats?: boolean
  /** The login is one of `protected-approvers`. */
  protectedApprover: boolean
  /** The login opened the pull request (it never counts when more than one approval is needed). */
  author: boolean
}

/** Whether this approval acknowledges the protected paths under the rules. */
export function acknowledgement(rules: ApprovalRules, c: Candidate): { ok: boolean; why?: string } {
  if (rules.protectedApprovers.length > 0) {
    return c.protectedApprover
      ? { ok: true }
      : {
          ok: false,
          why: `a change to protected paths needs an approval from one of the protected-approvers (${rules.protectedApprovers.join(', ')})`
        }
  }
  return c.acknowledges
    ? { ok: true }
    : {
        ok: false,
        why: `this change touches protected paths; approve it with \`/airlock approve ${c.diffPrefix} ${ACKNOWLEDGE}\` to acknowledge them`
      }
}

export interface Count {
  /** The gate turns green. */
  done: boolean
  tally: Tally
  /** What is missing, for the reply (empty when done). */
  missing: string[]
}

/**
 * The decision from the valid approvals and the blocking requests for changes (pure). Green when
 * nobody blocks, `required` distinct people approved (the author only when one is required) and,
 * when the diff changes protected paths, one of the counted approvals acknowledged them.
 */
export function countApprovals(
  candidates: readonly Candidate[],
  blockers: readonly string[],
  rules: ApprovalRules,
  protectedChanged: boolean,
  /** The diff's short form, for the command the reply names. */
  short: string,
  /** The threat review's verdict is suspicious or malicious (the report's marker says so). */
  threatsFlagged = false
): Count {
  const counted = candidates.filter((c) => !(c.author && rules.required > 1))
  const approvers: string[] = []
  for (const c of counted)
    if (!approvers.some((a) => a.toLowerCase() === c.login.toLowerCase())) approvers.push(c.login)
  const acks = counted.map((c) => acknowledgement(rules, c))
  const acknowledged = protectedChanged && acks.some((a) => a.ok)
  const threatsOk = counted.some((c) => c.acknowledgesThreats === true)
  const tally: Tally = {
    approvers,
    protectedChanged,
    acknowledged,
    blockers: [...blockers],
    ...(threatsFlagged ? { threats: { acknowledged: threatsOk } } : {})
  }
  const missing: string[] = []
  for (const b of blockers)
    missing.push(
      `@${b} requested changes; the gate waits for their approval (or a dismissal of their review)`
    )
  for (const c of candidates.filter((x) => x.author && rules.required > 1))
    missing.push(
      `@${c.login} opened this pull request; it needs ${rules.required} approvals from other people`
    )
  if (approvers.length < rules.required) {
    const more = rules.required - approvers.length
    missing.push(
      `${approvers.length} of ${rules.required} required approvals so far; ${more} more from ${more === 1 ? 'another person' : 'other people'} with write access`
    )
  }
  if (protectedChanged && !acknowledged) {
    const why = acks.find((a) => !a.ok)?.why
    missing.push(
      why ??
        acknowledgement(rules, {
          login: '',
          diffPrefix: short,
          acknowledges: false,
          protectedApprover: false,
          author: false
        }).why ??
        ''
    )
  }
  if (threatsFlagged && !threatsOk)
    missing.push(
      `the threat review flagged this diff (see Threat review in the review); approve it with \`/airlock approve ${short} ${THREATS}\` to acknowledge its findings`
    )
  return { done: missing.length === 0, tally, missing }
}
