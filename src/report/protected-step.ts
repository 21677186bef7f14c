// The review's next step when a diff changes protected paths (pure; shared by the review and the
// approval, which both word the same acknowledgement).

/** The word that acknowledges protected paths: `/airlock approve <prefix> protected`. */
export const ACKNOWLEDGE = 'protected'

/**
 * The review's next step for a diff that changes protected paths (pure; the review calls it):
 * which approval turns the gate green.
 */
export function protectedNextStep(
  diffSha256: string | null,
  protectedPaths: readonly unknown[],
  rules: {
    required: number
    protectedApprovers: readonly string[]
    /** The policy file names protected-approvers (the report records only that it does). */
    approversNamed?: boolean
    /** The policy file sets required-approvals (its value is not in the report). */
    requiredNamed?: boolean
  }
): string | null {
  const n = protectedPaths.length
  if (n === 0) return null
  const prefix = diffSha256 === null ? 'none' : diffSha256.slice(0, 12)
  const how =
    rules.protectedApprovers.length > 0
      ? `an approval from one of the protected-approvers (${rules.protectedApprovers.join(', ')})`
      : rules.approversNamed === true
        ? 'an approval from one of the protected-approvers named in .github/airlock.yml'
        : `an approval that acknowledges them: \`/airlock approve ${prefix} ${ACKNOWLEDGE}\``
  const count =
    rules.required > 1
      ? `; ${rules.required} approvals from different people in all`
      : rules.requiredNamed === true
        ? '; and as many approvals from different people as required-approvals in .github/airlock.yml asks'
        : ''
  return `this change touches ${n === 1 ? 'a protected path' : `${n} protected paths`} (see Policy above): the gate turns green only with ${how}${count}.`
}
