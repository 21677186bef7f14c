// The threat review stage: the captured diff (diff.patch as written) read by the deterministic
// rules, its secrets named from the capture's own scan, and one record for the report.
import type { DiffCapture } from '../evidence/capture.js'
import type { Logger } from '../log.js'
import { reviewPatch } from '../threat-review/review.js'
import type { ThreatReviewRecord } from '../threat-review/review.js'

export async function reviewThreats(
  capture: DiffCapture,
  log: Logger
): Promise<ThreatReviewRecord> {
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
  return record
}
