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
  protectedPaths: readonly string[],
  rules: { required: number; protectedApprovers: readonly string[] }
): string | null {
  if (protectedPaths.length === 0) return null
  const shown = protectedPaths.slice(0, 5).map((p) => `\`${p.replace(/`/g, "'")}\``)
  const more = protectedPaths.length > 5 ? ` and ${protectedPaths.length - 5} more` : ''
  const prefix = diffSha256 === null ? 'none' : diffSha256.slice(0, 12)
  const how =
    rules.protectedApprovers.length > 0
      ? `an approval from one of the protected-approvers (${rules.protectedApprovers.join(', ')})`
      : `an approval that acknowledges them: \`/airlock approve ${prefix} ${ACKNOWLEDGE}\``
  const count =
    rules.required > 1 ? `; ${rules.required} approvals from different people in all` : ''
  return `This change touches protected paths (${shown.join(', ')}${more}): the gate turns green only with ${how}${count}.`
}
