// The review comment: the gate's own lines, then the sections (comment/change.ts: the change;
// comment/run.ts: the run), every agent-derived string through comment/text.ts.
import { renderEgress } from './egress.js'
import type { Report } from './report.js'
import {
  diffSection,
  diffShownInFull,
  filesSection,
  newlyFailingSection,
  policySection,
  testsSection
} from './comment/change.js'
import {
  costLine,
  installSection,
  metadataSection,
  sandboxSection,
  timesLine
} from './comment/run.js'
import {
  answerSection,
  continuationLine,
  findingsSection,
  nextStepLine,
  taskSection
} from './comment/voice.js'
import { code, t } from './comment/text.js'
import { threatLine, threatSection } from './comment/threat.js'

/** GitHub rejects comments over 65,536 characters; stay well under. */
export const MAX_COMMENT_CHARS = 60_000

const OUTCOME_LINE: Record<Report['outcome'], string> = {
  success: '✅ success',
  'agent-failed': '❌ agent failed',
  'tests-failed': '❌ tests failed',
  'timed-out': '⏱️ timed out',
  'policy-violation': '🚫 policy violation',
  'infrastructure-error': '⚠️ infrastructure error',
  'configuration-error': '⚠️ configuration error',
  cancelled: '⏹️ cancelled'
}

/**
 * The hidden machine-readable line: run id, head SHA and diff SHA-256 of this comment,
 * `"partial":true` when the comment does not show the whole diff, and whether the diff changes
 * protected paths (src/github/review/marker.ts).
 */
export function marker(report: Report, partial = false): string {
  const fields = {
    runId: report.runId,
    headSha: report.repo.headSha,
    diffSha256: report.diff.sha256,
    ...(partial ? { partial: true } : {}),
    // The approval reads the protected change from here, never from a status anyone can write.
    protected: (report.policy.protected ?? []).length > 0,
    // And whether the threat review flagged it (an approval must then acknowledge it).
    ...(report.threatReview !== undefined
      ? { threats: report.threatReview.verdict !== 'clean' }
      : {})
  }
  // Only [A-Za-z0-9._:,"{}-] survive: nothing can close the HTML comment.
  const safe = JSON.stringify(fields).replace(/[^A-Za-z0-9._:,"{}-]/g, '')
  return `<!-- airlock:report ${safe} -->`
}

/** How a review that does not show the whole diff can be approved (src/github/approve.ts). */
export const UNSEEN_COMMAND = '/airlock approve <its full SHA-256> unseen'

function gateLine(report: Report, patch: string, partial: boolean): string {
  const diff = report.diff.sha256 ? `\`${report.diff.sha256.slice(0, 12)}\`` : 'none'
  if (report.local === true)
    return `**Gate:** none — a local run (no pull request, no status); outcome ${report.outcome}, diff ${diff}`
  if (report.outcome !== 'success')
    return `**Gate:** 🚫 blocked — outcome ${report.outcome}; this run's diff ${diff} cannot be approved`
  const head = `\`${(report.repo.headSha ?? 'unknown').slice(0, 12)}\``
  if (!partial)
    return `**Gate:** ⏳ pending — awaiting a maintainer's approval of diff ${diff} at head ${head}`
  return (
    `**Gate:** ⏳ pending — ⚠️ the diff ${diff} (${patch.length} characters) does not fit in this review, which shows only its beginning. ` +
    `Read the whole diff.patch of the run artifact; the gate then accepts only the comment ${t(UNSEEN_COMMAND)}, ` +
    `which states that you approve lines this review did not show (a shorter prefix or a review's approval is refused)`
  )
}

export interface RenderOptions {
  evidenceLine?: string | null
  /**
   * The pull request's address (`<server>/<owner>/<repo>/pull/<n>`), from the event: links to
   * reviews are built on it, never taken from the report.
   */
  pullUrl?: string
  /** Findings placed on the lines by the publisher (the rest are listed with why). */
  inline?: { posted: number; unanchored: Map<number, string> }
  /** Threat review findings placed on the lines by the publisher (the rest are listed with why). */
  threatInline?: { posted: number; unanchored: Map<number, string> }
}

/**
 * The review comment (and job summary), rendered from report.json and diff.patch only — by the run
 * and again by every publisher, which never forwards a comment.md it did not render. The gate's
 * own lines (heading, outcome, gate, next step) come first and are the only lines that start with
 * `## `, `**Gate:**` or `**Next step:**`; the task, the agent's answer and its findings are quoted
 * line by line; every agent-derived string is cut, escaped and placed inside a list item, a table
 * cell or a fenced block, so it can never open a line, mention anyone, or break the layout.
 */
export function renderComment(report: Report, patch: string, options: RenderOptions = {}): string {
  return renderReview(report, patch, options).body
}

/**
 * The review comment and whether it leaves part of the diff out (`partial`): then its gate line
 * and its marker say so, and the gate requires the approver to state it (src/github/approve.ts).
 */
export function renderReview(
  report: Report,
  patch: string,
  options: RenderOptions = {}
): { body: string; partial: boolean } {
  const full = render(report, patch, options, false)
  if (!full.partial) return full
  return render(report, patch, options, true)
}

function render(
  report: Report,
  patch: string,
  options: RenderOptions,
  partial: boolean
): { body: string; partial: boolean } {
  const head = [
    `## Agent Airlock: ${OUTCOME_LINE[report.outcome]}`,
    `> ${t(report.outcomeReason, 500)}`,
    gateLine(report, patch, partial),
    nextStepLine(report, partial),
    ...(report.isolation
      ? [
          `**Isolation:** ${code(report.isolation.tier, 60)} (asked: ${code(report.isolation.requested, 60)}) — ${report.isolation.reasons.map((r) => t(r, 200)).join('; ')}`
        ]
      : []),
    ...(report.continuation !== undefined
      ? [continuationLine(report, options.pullUrl) as string]
      : []),
    ...(report.threatReview !== undefined ? [threatLine(report) as string] : [])
  ]
  const body = [
    taskSection(report),
    answerSection(report),
    threatSection(report, options.threatInline),
    findingsSection(report, options.inline),
    policySection(report),
    newlyFailingSection(report),
    testsSection(report),
    filesSection(report)
  ]
  const egress = renderEgress(report)
  const tail = [
    installSection(report),
    timesLine(report),
    sandboxSection(report),
    egress === '' ? null : egress,
    costLine(report),
    metadataSection(report),
    options.evidenceLine ?? null
  ]
  const end = `\n\n${marker(report, partial)}\n`
  const assemble = (diff: string | null): string =>
    [...head, ...body, diff, ...tail].filter((p): p is string => p !== null).join('\n\n') + end
  const budget = MAX_COMMENT_CHARS - assemble(null).length - 200
  const rendered = assemble(diffSection(patch, budget))
  if (rendered.length <= MAX_COMMENT_CHARS)
    return { body: rendered, partial: partial || !diffShownInFull(patch, budget) }
  // Still too long (very long names everywhere): keep whole sections from the top.
  const sections = [...head, ...body, ...tail].filter((p): p is string => p !== null)
  const note = '… comment truncated: see report.json in the run artifact'
  let out = ''
  for (const s of sections) {
    if (out.length + s.length + note.length + end.length + 4 > MAX_COMMENT_CHARS) break
    out += (out === '' ? '' : '\n\n') + s
  }
  return { body: `${out}\n\n${note}${end}`, partial: partial || patch !== '' }
}
