// The comment's parts in other people's words, and what to do next: the task, the agent's answer,
// its findings (those not posted on the lines), and the next-step line. Every word of the task,
// the answer and the findings is untrusted: each line is escaped (no HTML, mention, link, image or
// heading; invisible and bidi characters shown as ⟨U+XXXX⟩) and sits inside a quote, so none can
// open a line of the product's own.
import { protectedNextStep } from '../protected-step.js'
import { escapeMarkdown } from '../escape.js'
import type { Report } from '../report.js'
import type { Finding } from '../../evidence/findings.js'
import { code, t } from './text.js'

/** Lines of a quote shown before the rest is folded. */
const OPEN_LINES = 6
/** Characters of the answer shown in the review (report.json and agent-message.md keep more). */
const MAX_ANSWER_SHOWN = 6000
const MAX_TASK_SHOWN = 2000
/** Characters of one finding's body in the review's list. */
const MAX_FINDING_SHOWN = 1000
const MAX_FINDINGS_LISTED = 30

/** One line of untrusted text inside a quote: escaped, and never a setext underline. */
function quoteLine(line: string): string {
  const escaped = escapeMarkdown(line).trimEnd()
  if (escaped === '') return '>'
  // `---` or `===` under a line would make it a heading: shown as text.
  return `> ${/^\s*[-=]{2,}\s*$/.test(escaped) ? `\\${escaped.trimStart()}` : escaped}`
}

/**
 * Untrusted text as a quote: cut to `max` characters (saying so), each line escaped, and the lines
 * past the first few folded into a closed <details>.
 */
export function quoted(text: string, max: number, whole = ''): string {
  const chars = [...text.replace(/\r\n?/g, '\n').trimEnd()]
  const cut = chars.length > max
  const lines = (cut ? chars.slice(0, max).join('') : chars.join('')).split('\n')
  const open = lines.slice(0, OPEN_LINES).map(quoteLine).join('\n')
  const rest = lines.slice(OPEN_LINES)
  const parts = [open]
  if (rest.length > 0)
    parts.push(
      `<details><summary>${rest.length} more line(s)</summary>\n\n${rest.map(quoteLine).join('\n')}\n\n</details>`
    )
  if (cut) parts.push(`_… cut here: ${chars.length - max} more character(s)${whole}_`)
  return parts.join('\n\n')
}

export function taskSection(report: Report): string | null {
  const text = report.task.text
  if (text === undefined || text.trim() === '') return null
  const more =
    report.task.truncated === true ? '\n\n_… the whole task is task.md in the run artifact_' : ''
  return `**Task** (as given to the agent):\n\n${quoted(text, MAX_TASK_SHOWN, ' (task.md in the run artifact)')}${more}`
}

const SOURCE: Record<NonNullable<Report['agent']['message']>['source'], string> = {
  'summary.md': 'its summary.md',
  cli: "its CLI's final message",
  transcript: "the model's last reply (transcript)"
}

export function answerSection(report: Report): string | null {
  const m = report.agent.message
  const note = report.agent.messageNote
  if (m === undefined)
    return note !== undefined ? `### The agent's answer\n\n_none: ${t(note, 300)}_` : null
  return [
    "### The agent's answer",
    `_In the agent's own words (from ${SOURCE[m.source]}; untrusted, shown as text):_`,
    quoted(m.text, MAX_ANSWER_SHOWN, ' (agent-message.md in the run artifact)'),
    ...(m.truncated
      ? [`_The agent wrote ${m.chars} characters; report.json keeps the first 16,000._`]
      : []),
    ...(note !== undefined ? [`_${t(note, 300)}_`] : [])
  ].join('\n\n')
}

const SEVERITY: Record<Finding['severity'], string> = {
  error: '🔴 error',
  warning: '🟠 warning',
  note: '🔵 note'
}

/** Where a finding points: path and line or range, on the base or the head. */
export function findingPlace(f: Finding): string {
  const lines = f.startLine !== undefined ? `${f.startLine}–${f.line}` : `${f.line}`
  return `${code(f.path, 200)} line ${lines}${f.side === 'LEFT' ? ' (base)' : ''}`
}

/** A finding's own words, for an inline comment: the severity, then the body as a quote. */
export function findingBody(f: Finding): string {
  return `**${SEVERITY[f.severity]}** (the agent's finding; untrusted, shown as text)\n\n${quoted(f.body, MAX_FINDING_SHOWN)}`
}

/**
 * The findings section of the body: the findings not placed on the lines (all of them when
 * `inline` is undefined: the run's own comment.md, before anything is published), with why, and
 * the refused ones.
 */
export function findingsSection(
  report: Report,
  inline?: { posted: number; unanchored: Map<number, string> }
): string | null {
  const r = report.findings
  if (r === undefined) return null
  const lines = ['### Findings']
  if (r.status !== 'ok') {
    lines.push(`⚠️ review.json was not read (${r.status}): ${t(r.detail ?? '', 300)}`)
    return lines.join('\n\n')
  }
  if (inline !== undefined && inline.posted > 0)
    lines.push(`${inline.posted} finding(s) are on the lines (comments of this review).`)
  const listed = r.findings
    .map((f, i) => ({ f, i }))
    .filter(({ i }) => inline === undefined || inline.unanchored.has(i))
  if (listed.length > 0) {
    if (inline !== undefined)
      lines.push(`${listed.length} finding(s) could not be placed on the pull request's diff:`)
    lines.push(
      listed
        .slice(0, MAX_FINDINGS_LISTED)
        .map(({ f, i }) => {
          const why = inline?.unanchored.get(i)
          const head = `- **${SEVERITY[f.severity]}** ${findingPlace(f)}${why !== undefined ? ` — ${t(why, 200)}` : ''}`
          const body = quoted(f.body, MAX_FINDING_SHOWN)
            .split('\n')
            .map((l) => `  ${l}`)
            .join('\n')
          return `${head}\n\n${body}`
        })
        .join('\n')
    )
    if (listed.length > MAX_FINDINGS_LISTED)
      lines.push(
        `…and ${listed.length - MAX_FINDINGS_LISTED} more (report.json in the run artifact)`
      )
  }
  if (r.refused.length > 0 || r.detail !== undefined)
    lines.push(
      `Refused from review.json (schema/review.schema.json):\n` +
        r.refused.map((x) => `- finding #${x.index + 1}: ${t(x.reason, 200)}`).join('\n') +
        (r.detail !== undefined ? `\n- ${t(r.detail, 200)}` : '')
    )
  if (r.findings.length === 0 && r.refused.length === 0)
    lines.push('_review.json has no findings._')
  return lines.join('\n\n')
}

/** What blocks the gate for each outcome, and how to clear it. */
const CLEAR: Record<Exclude<Report['outcome'], 'success'>, string> = {
  'agent-failed':
    'the agent failed: read logs/agent.log in the run artifact, then push a fix or change the task; a new push starts a new run',
  'tests-failed':
    'the tests failed after the agent: see Tests above and logs/tests.log; push a fix or change the task; a new push starts a new run',
  'timed-out':
    'the agent ran out of time: raise timeout-minutes or narrow the task, then re-run the workflow',
  'policy-violation':
    'the change breaks the policy: see Policy above; change the task, or the policy on the base branch (.github/airlock.yml), then re-run',
  'infrastructure-error':
    'the runner failed, not the agent: re-run the workflow; if it fails again, read the job log',
  'configuration-error':
    'an input is wrong: fix the input named above in the workflow or policy file, then re-run',
  cancelled: 'the run was cancelled: re-run the workflow'
}

/** The same for a local run (`airlock run`): no workflow, no push, no pull request. */
const CLEAR_LOCAL: Record<Exclude<Report['outcome'], 'success'>, string> = {
  'agent-failed':
    'the agent failed: read logs/agent.log in the output folder, fix the cause or change the task, then run `airlock run` again',
  'tests-failed':
    'the tests failed after the agent: see Tests above and logs/tests.log; fix the cause or change the task, then run `airlock run` again',
  'timed-out':
    'the agent ran out of time: raise --timeout-minutes or narrow the task, then run `airlock run` again',
  'policy-violation':
    'the change breaks the policy: see Policy above; change the task or the policy file, then run `airlock run` again',
  'infrastructure-error':
    'the machine failed, not the agent: check that Docker answers, then run `airlock run` again',
  'configuration-error': 'a flag is wrong: fix the flag named above, then run `airlock run` again',
  cancelled: 'the run was cancelled: run `airlock run` again'
}

/** The line that says what to do next: the exact approval command, or what blocks and how to clear it. */
export function nextStepLine(report: Report, partial = false): string {
  if (report.local === true) {
    if (report.outcome !== 'success')
      return `**Next step:** blocked — ${CLEAR_LOCAL[report.outcome]}.`
    const sha = report.diff.sha256 === null ? 'none' : `\`${report.diff.sha256.slice(0, 12)}…\``
    return report.diff.sha256 === null || report.diff.totalFiles === 0
      ? '**Next step:** a local run has no pull request and no gate: the agent changed nothing.'
      : `**Next step:** a local run has no pull request and no gate: read the diff (diff.patch in the output folder, sha256 ${sha}); to take this exact change, \`git apply\` it on your branch.`
  }
  if (report.outcome !== 'success') return `**Next step:** blocked — ${CLEAR[report.outcome]}.`
  // The threat review flagged the diff: the approval must say `threats` too.
  const threats = report.threatReview !== undefined && report.threatReview.verdict !== 'clean'
  const ack = threats
    ? ' The threat review flagged this diff: read its findings (Threat review below), and add `threats` to the command to acknowledge them.'
    : ''
  if (partial)
    return `**Next step:** this review does not show the whole diff: read diff.patch of the run artifact; to accept this exact diff, a maintainer then comments \`/airlock approve <its full SHA-256> unseen\` on this pull request.${ack}`
  const prefix = report.diff.sha256 === null ? 'none' : report.diff.sha256.slice(0, 12)
  const settings = report.policy.source?.settings ?? []
  const guarded = protectedNextStep(report.diff.sha256, report.policy.protected ?? [], {
    required: 1,
    protectedApprovers: [],
    approversNamed: settings.includes('protected-approvers'),
    requiredNamed: settings.includes('required-approvals')
  })
  if (guarded !== null) return `**Next step:** ${guarded}${ack}`
  const what =
    report.diff.sha256 === null || report.diff.totalFiles === 0
      ? 'the agent changed nothing; to pass the gate'
      : 'to accept this exact diff'
  if (threats)
    return `**Next step:** the threat review flagged this diff: read its findings (Threat review below); ${what}, a maintainer comments \`/airlock approve ${prefix} threats\` on this pull request.`
  return `**Next step:** ${what}, a maintainer comments \`/airlock approve ${prefix}\` on this pull request.`
}

/** The review id at the end of a review's address (`…#pullrequestreview-<id>`), or null. */
const REVIEW_ID = /#pullrequestreview-([0-9]{1,20})$/

/**
 * A follow-up run: the run it continues (linked to that run's review) and whether it started from
 * that run's patch; the earlier review is marked superseded when this one is published.
 * report.json may come from a hostile artifact: of its review address only the review's id is
 * used, and the link is built on `pullUrl` — the pull request's own address, which the publisher
 * knows from the event (server, repository, number) — so it can only lead to a review there.
 * Without `pullUrl` (the CLI, the job summary) the run is named without a link.
 */
export function continuationLine(report: Report, pullUrl?: string): string | null {
  const c = report.continuation
  if (c === undefined) return null
  const run = `run ${code(c.runId, 80)}`
  const id = c.reviewUrl !== undefined ? REVIEW_ID.exec(c.reviewUrl)?.[1] : undefined
  const linked =
    id !== undefined && pullUrl !== undefined ? `[${run}](${pullUrl}#pullrequestreview-${id})` : run
  const comments =
    c.comments > 0 ? ` The agent was given ${c.comments} review comment(s) on its findings.` : ''
  return `**Continues:** ${linked} — ${t(c.note, 300)}; this review supersedes the earlier one.${comments}`
}
