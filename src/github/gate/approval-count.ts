/**
 * Approvals that mean more: `required-approvals: N` distinct people, and an acknowledgement of
 * changes to protected paths. Pure: the tally so far is read from the action's own pending gate
 * status (only statuses the action's identity wrote are believed), and written back into it.
 *
 * The gate's description carries the tally, for example
 * `approvals 1/2 by @alice for diff 0123456789ab; protected` (a protected change not yet
 * acknowledged) or `…; protected ok` (acknowledged). GitHub cuts descriptions at 140 characters,
 * which is why at most {@link MAX_REQUIRED_APPROVALS} approvals can be required.
 */
import { list } from '../../input-read.js'
import { ConfigurationError } from '../../errors.js'
import { ACKNOWLEDGE } from '../../report/protected-step.js'

/** The most approvals a policy may require (the tally must fit in a status description). */
export const MAX_REQUIRED_APPROVALS = 3

/** Where the gate's description says that protected paths changed. */
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

/** The approvals counted so far for one diff, read from the gate. */
export interface Tally {
  approvers: string[]
  /** The diff changes protected paths. */
  protectedChanged: boolean
  /** An approval that acknowledges the protected paths was counted. */
  acknowledged: boolean
}

const TALLY =
  /^approvals \d+\/\d+ by ((?:@[A-Za-z0-9-]{1,39} ?)+) for diff ([0-9a-f]{12}|none)(; protected( ok)?)?$/

/**
 * The tally in a pending gate's description for the diff `short` (12 hex digits or `none`): the
 * approvers counted so far and whether protected paths changed. A description in no known form
 * counts nobody (fail closed); a protected note in it is always believed.
 */
export function tallyOf(description: string | null, short: string): Tally {
  const text = description ?? ''
  const m = TALLY.exec(text)
  if (m && m[2] === short) {
    return {
      approvers: m[1]
        .trim()
        .split(' ')
        .map((a) => a.slice(1)),
      protectedChanged: m[3] !== undefined,
      acknowledged: m[4] !== undefined
    }
  }
  return { approvers: [], protectedChanged: text.includes(PROTECTED_NOTE), acknowledged: false }
}

/** The gate's description for a tally that is not yet enough. */
export function tallyDescription(tally: Tally, required: number, short: string): string {
  const who = tally.approvers.map((a) => `@${a}`).join(' ')
  const note = tally.protectedChanged ? (tally.acknowledged ? '; protected ok' : '; protected') : ''
  return `approvals ${tally.approvers.length}/${required} by ${who} for diff ${short}${note}`
}

export interface Candidate {
  login: string
  /** The prefix of the diff being approved, as the approval command names it. */
  diffPrefix: string
  /** The approval says `protected` after the diff prefix. */
  acknowledges: boolean
  /** The login is one of `protected-approvers`. */
  protectedApprover: boolean
  /** The login opened the pull request (it never counts when more than one approval is needed). */
  author: boolean
}

export type Count =
  { done: true; tally: Tally } | { done: false; tally: Tally; counted: boolean; reason: string }

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

/**
 * Adds one approval (already checked: a human writer, an approver, on the current head and diff)
 * to the tally. The gate turns green when `required` distinct people approved and, when the diff
 * changes protected paths, one of the counted approvals acknowledged them.
 */
export function countApproval(tally: Tally, rules: ApprovalRules, c: Candidate): Count {
  if (c.author && rules.required > 1) {
    return {
      done: false,
      counted: false,
      tally,
      reason: `@${c.login} opened this pull request; it needs ${rules.required} approvals from other people`
    }
  }
  const ack = tally.protectedChanged ? acknowledgement(rules, c) : { ok: false }
  const already = tally.approvers.some((a) => a.toLowerCase() === c.login.toLowerCase())
  const next: Tally = {
    approvers: already ? tally.approvers : [...tally.approvers, c.login],
    protectedChanged: tally.protectedChanged,
    acknowledged: tally.acknowledged || ack.ok
  }
  const enough = next.approvers.length >= rules.required
  if (enough && (!next.protectedChanged || next.acknowledged)) return { done: true, tally: next }
  const missing: string[] = []
  if (already && !ack.ok) missing.push(`@${c.login} has already approved this diff`)
  if (!enough) {
    const more = rules.required - next.approvers.length
    missing.push(
      `${next.approvers.length} of ${rules.required} required approvals so far; ${more} more from ${more === 1 ? 'another person' : 'other people'} with write access`
    )
  }
  if (next.protectedChanged && !next.acknowledged) missing.push(ack.why ?? '')
  return {
    done: false,
    counted: !already || ack.ok,
    tally: next,
    reason: `the gate stays pending: ${missing.filter((m) => m !== '').join('; ')}`
  }
}
