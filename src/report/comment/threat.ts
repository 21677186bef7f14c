// The threat review in the comment: one line under the gate's lines with the verdict, a section
// listing the findings not placed on the lines, and the body of a finding placed on its line.
// A finding's words are the product's, but they quote the change (hosts, names, the matched
// line): every part is cut and escaped like any agent-derived text.
import type { Report } from '../report.js'
import type { ThreatFinding, ThreatVerdict } from '../../threat-review/review.js'
import { code, t } from './text.js'

const VERDICT: Record<ThreatVerdict, string> = {
  clean: '✅ clean',
  suspicious: '⚠️ suspicious',
  malicious: '🛑 malicious'
}
const SEVERITY: Record<ThreatFinding['severity'], string> = { high: '🛑 high', medium: '⚠️ medium' }
const MAX_LISTED = 40

/** `**Threat review:** ⚠️ suspicious — 3 finding(s): …`, or null when the run has no review. */
export function threatLine(report: Report): string | null {
  const r = report.threatReview
  if (r === undefined) return null
  if (r.verdict === 'clean')
    return `**Threat review:** ${VERDICT.clean} — the rules found nothing in this diff (${r.files} file(s) read)`
  const high = r.findings.filter((f) => f.severity === 'high').length
  const classes = Object.entries(r.classes)
    .map(([c, n]) => `${c} ${n}`)
    .join(', ')
  return `**Threat review:** ${VERDICT[r.verdict]} — ${r.total} finding(s)${high > 0 ? `, ${high} high` : ''}${classes !== '' ? ` (${classes})` : ''}; see Threat review below`
}

/** Where a threat finding points. */
function place(f: ThreatFinding): string {
  return `${code(f.path, 200)}${f.line !== null ? ` line ${f.line}` : ''}${f.side === 'LEFT' ? ' (base)' : ''}`
}

/** What a finding says, after its place: severity, class and rule, why, the text matched. */
function says(f: ThreatFinding): string {
  return `**${SEVERITY[f.severity]}** ${code(`${f.class}/${f.rule}`, 80)} — ${t(f.why, 300)}${f.match !== undefined ? ` — ${code(f.match, 120)}` : ''}`
}

/** The inline comment of a threat finding placed on its line. */
export function threatCommentBody(f: ThreatFinding): string {
  return `🛡️ **Threat review** (Agent Airlock's rules, not the agent): ${says(f)}`
}

/**
 * The threat review's section: the verdict, what the rules could not read, and the findings not
 * placed on the lines (all of them when `inline` is undefined: the run's own comment.md), with why.
 */
export function threatSection(
  report: Report,
  inline?: { posted: number; unanchored: Map<number, string> }
): string | null {
  const r = report.threatReview
  if (r === undefined || r.verdict === 'clean') return null
  const lines = ['### Threat review']
  lines.push(
    r.verdict === 'malicious'
      ? 'The rules found what a change rarely does for an ordinary reason. Read each line below before approving.'
      : 'The rules found changes that deserve a careful look before approving.'
  )
  for (const n of r.notes) lines.push(`⚠️ ${t(n, 300)}`)
  if (inline !== undefined && inline.posted > 0)
    lines.push(`${inline.posted} finding(s) are on the lines (comments of this review).`)
  const listed = r.findings
    .map((f, i) => ({ f, i }))
    .filter(({ i }) => inline === undefined || inline.unanchored.has(i))
  if (listed.length > 0)
    lines.push(
      listed
        .slice(0, MAX_LISTED)
        .map(({ f }) => `- ${place(f)}: ${says(f)}`)
        .join('\n')
    )
  const more = r.total - Math.min(listed.length, MAX_LISTED) - (inline?.posted ?? 0)
  if (more > 0) lines.push(`…and ${more} more (report.json in the run artifact)`)
  return lines.join('\n\n')
}
