// The threat review stage: the captured diff (diff.patch as written) read by the deterministic
// rules, its secrets named from the capture's own scan; one record for the report, and with
// `threat-review: block` a policy violation for a malicious verdict (which cannot be approved).
import type { DiffCapture } from '../evidence/capture.js'
import type { PolicyFinding } from '../evidence/path-policy.js'
import type { Logger } from '../log.js'
import { reviewPatch } from '../threat-review/review.js'
import type { ThreatReviewRecord } from '../threat-review/review.js'

export interface ThreatStage {
  record: ThreatReviewRecord
  /** `threat-review: block` and a malicious verdict: the violation that fails the run. */
  violations: PolicyFinding[]
}

/** The violation a verdict makes under `threat-review` (none unless block and malicious). */
export function threatViolations(
  record: ThreatReviewRecord,
  mode: 'acknowledge' | 'block'
): PolicyFinding[] {
  if (mode !== 'block' || record.verdict !== 'malicious') return []
  const high = record.findings.filter((f) => f.severity === 'high')
  const first = high[0]
  return [
    {
      rule: 'threat-review',
      path: first?.path ?? null,
      detail: `the threat review's verdict is malicious (${high.length} high finding(s)${first !== undefined ? `, the first ${first.class}/${first.rule}${first.line !== null ? ` at line ${first.line}` : ''}` : ''}); threat-review: block makes it a violation`
    }
  ]
}

export async function reviewThreats(
  capture: DiffCapture,
  mode: 'acknowledge' | 'block',
  log: Logger
): Promise<ThreatStage> {
  const record = await reviewPatch(capture.patch, {
    diffSha256: capture.diff.sha256,
    // diff.patch is masked: the capture's secret scan says where the tokens were.
    secrets: capture.violations
      .filter((v) => v.rule === 'secret-in-diff')
      .map((v) => ({ path: v.path, detail: v.detail })),
    unread: capture.diff.totalFiles - capture.diff.filesInPatch
  })
  const classes = Object.entries(record.classes).map(([c, n]) => `${c} ${n}`)
  log.info(
    `threat review: ${record.verdict}${record.total > 0 ? ` (${record.total} finding(s): ${classes.join(', ')})` : ''}`
  )
  for (const n of record.notes) log.warn(`threat review: ${n}`)
  return { record, violations: threatViolations(record, mode) }
}
