import { cap, codeBlock, escapeMarkdown } from './escape.js'
import type { Report } from './report.js'
import { renderEgress } from '../egress/comment.js'

/** GitHub rejects comments over 65,536 characters; stay well under. */
export const MAX_COMMENT_CHARS = 60_000
const MAX_DIFF_CHARS = 20_000
const MAX_FILES = 100

const OUTCOME_LINE: Record<Report['outcome'], string> = {
  success: '✅ success',
  'agent-failed': '❌ agent failed',
  'tests-failed': '❌ tests failed',
  'timed-out': '⏱️ timed out',
  'policy-violation': '🚫 policy violation',
  'infrastructure-error': '⚠️ infrastructure error',
  cancelled: '⏹️ cancelled'
}

export function marker(report: Report): string {
  const fields = {
    runId: report.runId,
    headSha: report.repo.headSha,
    diffSha256: report.diff.sha256
  }
  // Only [A-Za-z0-9._-] and hex survive: nothing can close the HTML comment.
  const safe = JSON.stringify(fields).replace(/[^A-Za-z0-9._:,"{}-]/g, '')
  return `<!-- airlock:report ${safe} -->`
}

/** The review comment (and job summary), rendered from report.json and the patch only. */
export function renderComment(report: Report, patch: string): string {
  const parts: string[] = []
  parts.push(`## Agent Airlock: ${OUTCOME_LINE[report.outcome]}`)
  parts.push(escapeMarkdown(report.outcomeReason))
  const diff = report.diff.sha256 ? `\`${report.diff.sha256.slice(0, 12)}\`` : 'none'
  parts.push(
    `**Gate:** awaiting approval of diff ${diff} · run \`${escapeMarkdown(report.runId)}\``
  )
  if (report.policy.violations.length > 0) {
    parts.push(
      '### Policy\n' +
        report.policy.violations
          .map(
            (v) =>
              `- **${escapeMarkdown(v.rule)}**${v.path ? ` \`${escapeMarkdown(v.path)}\`` : ''}: ${escapeMarkdown(v.detail)}`
          )
          .join('\n')
    )
  }
  const t = report.tests.summary
  if (report.tests.command !== null) {
    const failed = report.tests.cases.filter((c) => c.status === 'failed').slice(0, 20)
    parts.push(
      `### Tests\n| total | passed | failed | skipped |\n|---:|---:|---:|---:|\n| ${t.total} | ${t.passed} | ${t.failed} | ${t.skipped} |` +
        (failed.length > 0
          ? '\n\nFailing:\n' + failed.map((c) => `- ${escapeMarkdown(c.id)}`).join('\n')
          : '')
    )
  }
  const files = report.diff.files.slice(0, MAX_FILES)
  parts.push(
    `### Changed files (${report.diff.files.length})\n` +
      (files.length === 0
        ? '_none_'
        : '| file | status | + | − |\n|---|---|---:|---:|\n' +
          files
            .map(
              (f) =>
                `| ${escapeMarkdown(f.path)} | ${f.status}${f.binary ? ' (binary)' : ''} | ${f.additions} | ${f.deletions} |`
            )
            .join('\n')) +
      (report.diff.files.length > MAX_FILES
        ? `\n\n…and ${report.diff.files.length - MAX_FILES} more (see the artifact)`
        : '')
  )
  if (patch !== '') {
    const shown = cap(
      patch,
      MAX_DIFF_CHARS,
      '… diff truncated: the full diff.patch is in the run artifact'
    )
    parts.push(`<details><summary>Diff</summary>\n\n${codeBlock(shown, 'diff')}\n\n</details>`)
  }
  const s = report.sandbox
  parts.push(
    `<details><summary>Sandbox</summary>\n\n| setting | value |\n|---|---|\n` +
      `| runtime | ${escapeMarkdown(s.runtime)} |\n| network | ${escapeMarkdown(s.network)} |\n| user | ${escapeMarkdown(s.user)} |\n` +
      `| read-only rootfs | ${s.readOnlyRootfs} |\n| capabilities dropped | ${escapeMarkdown(s.capDrop.join(', '))} |\n` +
      `| memory | ${s.memory} bytes |\n| cpus | ${s.cpus} |\n| pids limit | ${s.pidsLimit} |\n| image | \`${escapeMarkdown(report.image.id ?? 'n/a')}\` |\n` +
      `| settings read from | ${s.source} |\n\n</details>`
  )
  const egressDetails = renderEgress(report)
  if (egressDetails !== '') parts.push(egressDetails)
  parts.push(
    `**Egress:** ${report.egress.allowed} allowed, ${report.egress.denied} denied · **Cost:** ${(report.cost.wallMs / 1000).toFixed(1)} s wall` +
      (report.cost.cpuSeconds !== null ? `, ${report.cost.cpuSeconds.toFixed(1)} CPU s` : '') +
      (report.cost.peakMemoryBytes !== null
        ? `, ${Math.round(report.cost.peakMemoryBytes / 1048576)} MiB peak`
        : '')
  )
  const tail = `\n\n${marker(report)}\n`
  return (
    cap(
      parts.join('\n\n'),
      MAX_COMMENT_CHARS - tail.length,
      '… comment truncated: see the run artifact'
    ) + tail
  )
}
