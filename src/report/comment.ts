import { codeBlock, escapeMarkdown } from './escape.js'
import { renderEgress } from './egress.js'
import type { Report } from './report.js'

/** GitHub rejects comments over 65,536 characters; stay well under. */
export const MAX_COMMENT_CHARS = 60_000
const MAX_DIFF_CHARS = 20_000
const MAX_FILES = 100
const MAX_TESTS_LISTED = 20
const MAX_FINDINGS = 30
/** Agent-derived strings are cut to this many characters before escaping. */
const MAX_NAME = 200

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

/** The hidden machine-readable line: run id, head SHA and diff SHA-256 of this comment. */
export function marker(report: Report): string {
  const fields = {
    runId: report.runId,
    headSha: report.repo.headSha,
    diffSha256: report.diff.sha256
  }
  // Only [A-Za-z0-9._:,"{}-] survive: nothing can close the HTML comment.
  const safe = JSON.stringify(fields).replace(/[^A-Za-z0-9._:,"{}-]/g, '')
  return `<!-- airlock:report ${safe} -->`
}

/** Untrusted text for inline use: cut first (so an escape is never split), then escaped. */
function t(text: string, max = MAX_NAME): string {
  const chars = [...text]
  return escapeMarkdown(chars.length > max ? chars.slice(0, max).join('') + '…' : text)
}

function code(text: string, max = MAX_NAME): string {
  // Inline code cannot hold escapes; an escaped plain span in <code> keeps it literal and closed.
  return `<code>${t(text, max)}</code>`
}

function more(shown: number, total: number, what: string): string {
  return total > shown
    ? `\n\n…and ${total - shown} more ${what} (see report.json in the run artifact)`
    : ''
}

function bytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(1)} GiB`
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(0)} MiB`
  return `${n} bytes`
}

function gateLine(report: Report): string {
  const diff = report.diff.sha256 ? `\`${report.diff.sha256.slice(0, 12)}\`` : 'none'
  if (report.outcome === 'success')
    return `**Gate:** ⏳ pending — awaiting a maintainer's approval of diff ${diff} at head \`${(report.repo.headSha ?? 'unknown').slice(0, 12)}\``
  return `**Gate:** 🚫 blocked — outcome ${report.outcome}; this run's diff ${diff} cannot be approved`
}

function policySection(report: Report): string | null {
  const { violations, protected: flagged } = report.policy
  if (violations.length === 0 && flagged.length === 0) return null
  const item = (v: { rule: string; path: string | null; detail: string }): string =>
    `- **${t(v.rule, 60)}**${v.path !== null ? ` ${code(v.path)}` : ''}: ${t(v.detail, 300)}`
  const lines = ['### Policy']
  if (violations.length > 0) {
    lines.push(`🚫 **${violations.length} violation(s)**`)
    lines.push(violations.slice(0, MAX_FINDINGS).map(item).join('\n'))
    lines.push(
      more(Math.min(MAX_FINDINGS, violations.length), violations.length, 'violations').trim()
    )
  }
  if (flagged.length > 0) {
    lines.push(`🔒 **${flagged.length} protected change(s)** need explicit approval`)
    lines.push(flagged.slice(0, MAX_FINDINGS).map(item).join('\n'))
    lines.push(
      more(Math.min(MAX_FINDINGS, flagged.length), flagged.length, 'protected changes').trim()
    )
  }
  return lines.filter((l) => l !== '').join('\n\n')
}

function newlyFailingSection(report: Report): string | null {
  const cmp = report.tests.comparison
  if (cmp !== null) {
    const newly = cmp.cases.filter((c) => c.classification === 'newly-failing')
    if (newly.length === 0) return null
    return (
      `### ❌ Newly failing tests (${newly.length})\n` +
      newly
        .slice(0, MAX_TESTS_LISTED)
        .map((c) => `- ${code(c.id)}`)
        .join('\n') +
      more(Math.min(MAX_TESTS_LISTED, newly.length), newly.length, 'tests')
    )
  }
  const failed = report.tests.cases.filter((c) => c.status === 'failed')
  if (failed.length === 0) return null
  return (
    `### ❌ Failing tests (${failed.length})\n` +
    failed
      .slice(0, MAX_TESTS_LISTED)
      .map((c) => `- ${code(c.id)}`)
      .join('\n') +
    more(Math.min(MAX_TESTS_LISTED, failed.length), failed.length, 'tests')
  )
}

function testsSection(report: Report): string | null {
  const tests = report.tests
  if (tests.command === null) return null
  const row = (name: string, s: Report['tests']['summary']): string =>
    `| ${name} | ${s.total} | ${s.passed} | ${s.failed} | ${s.skipped} | ${s.flaky ?? 0} |`
  const rows = [
    '| run | total | passed | failed | skipped | flaky |',
    '|---|---:|---:|---:|---:|---:|'
  ]
  if (tests.baseline) rows.push(row('base (before the agent)', tests.baseline.summary))
  rows.push(row('head (after the agent)', tests.summary))
  const lines = ['### Tests', rows.join('\n')]
  if (tests.comparison) {
    const c = tests.comparison.counts
    lines.push(
      `Compared with the base: ${c['newly-failing']} newly failing · ${c.fixed} fixed · ${c['still-failing']} still failing · ${c.passing} passing · ${c.new} new · ${c.removed} removed · ${c.skipped} skipped`
    )
  }
  if (tests.rerun && tests.rerun.flaky.length > 0) {
    lines.push(
      `⚠️ Flaky (failed, then passed on the one re-run):\n` +
        tests.rerun.flaky
          .slice(0, MAX_TESTS_LISTED)
          .map((id) => `- ${code(id)}`)
          .join('\n') +
        more(
          Math.min(MAX_TESTS_LISTED, tests.rerun.flaky.length),
          tests.rerun.flaky.length,
          'tests'
        )
    )
  }
  const bad = tests.sources.filter((s) => s.status !== 'ok')
  if (bad.length > 0) {
    lines.push(
      'Reports not read:\n' +
        bad
          .slice(0, 10)
          .map((s) => `- ${code(s.path)}: ${s.status}${s.detail ? ` (${t(s.detail, 200)})` : ''}`)
          .join('\n')
    )
  }
  if (tests.sources.length === 0)
    lines.push('_No test-reports configured: only the exit code counts._')
  return lines.join('\n\n')
}

function filesSection(report: Report): string {
  const d = report.diff
  const files = d.files.slice(0, MAX_FILES)
  const table =
    files.length === 0
      ? '_none_'
      : '| file | change | + | − |\n|---|---|---:|---:|\n' +
        files
          .map(
            (f) =>
              `| ${code(f.path)} | ${f.status}${f.binary ? ' (binary)' : ''}${f.mode === '120000' ? ' (symlink)' : ''}${f.mode === '100755' ? ' (executable)' : ''} | ${f.additions} | ${f.deletions} |`
          )
          .join('\n')
  const notes: string[] = []
  if (d.totalFiles > files.length)
    notes.push(
      `…and ${d.totalFiles - files.length} more (the full list is in report.json and diff.patch)`
    )
  for (const x of d.truncation) notes.push(`✂️ ${t(x, 300)}`)
  if (d.redacted) notes.push('🔑 the change contained a secret value; it is masked in diff.patch')
  const skipped = d.skipped.filter((s) => s.reason !== 'git-dir' && s.reason !== 'limit')
  if (skipped.length > 0)
    notes.push(
      `Not taken (not regular files): ${skipped
        .slice(0, 10)
        .map((s) => `${code(s.path, 100)} (${s.reason})`)
        .join(', ')}${skipped.length > 10 ? ', …' : ''}`
    )
  if (d.ignored && d.ignored.total > 0)
    notes.push(
      `Left out as build output (ignored by the base tree's .gitignore; still present when the tests ran): ${d.ignored.entries
        .slice(0, 10)
        .map((s) => code(s.path, 100))
        .join(', ')}${d.ignored.total > 10 ? `, … (${d.ignored.total} in all)` : ''}`
    )
  return [`### Changed files (${d.totalFiles})`, table, ...notes].join('\n\n')
}

function diffSection(patch: string, budget: number): string | null {
  if (patch === '') return null
  const room = Math.max(0, Math.min(MAX_DIFF_CHARS, budget))
  const note = '… diff truncated here: the full diff.patch is in the run artifact'
  let shown = patch
  if (patch.length > room) {
    const cut = patch.lastIndexOf('\n', Math.max(0, room - note.length))
    shown = patch.slice(0, Math.max(0, cut)) + '\n' + note
  }
  if (room < 200) shown = note
  return `<details><summary>Diff</summary>\n\n${codeBlock(shown, 'diff')}\n\n</details>`
}

function sandboxSection(report: Report): string {
  const s = report.sandbox
  const a = s.applied
  const rows: [string, string][] = [
    ['runtime', a?.runtime ?? s.runtime],
    ['network', a?.network ?? s.network],
    ['user', a?.user ?? s.user],
    ['read-only root filesystem', String(a?.readOnlyRootfs ?? s.readOnlyRootfs)],
    ['capabilities dropped', (a?.capDrop ?? s.capDrop).join(', ')],
    ['no-new-privileges', String(a?.noNewPrivileges ?? s.noNewPrivileges)],
    ['memory (swap included)', bytes(a?.memoryBytes ?? s.memory)],
    ['cpus', String(a?.cpus ?? s.cpus)],
    ['pids limit', String(a?.pidsLimit ?? s.pidsLimit)],
    ['image', report.image.id ?? 'n/a'],
    ['base images', report.image.baseDigests.join(', ') || 'n/a'],
    ['settings read from', s.source === 'inspect' ? 'the container (docker inspect)' : 'the plan']
  ]
  return (
    '<details><summary>Sandbox</summary>\n\n| setting | value |\n|---|---|\n' +
    rows.map(([k, v]) => `| ${k} | ${t(v, 300)} |`).join('\n') +
    '\n\n</details>'
  )
}

function costLine(report: Report): string {
  const c = report.cost
  const parts = [`${(c.wallMs / 1000).toFixed(1)} s wall`]
  if (c.cpuSeconds !== null) parts.push(`${c.cpuSeconds.toFixed(1)} CPU s`)
  if (c.peakMemoryBytes !== null) parts.push(`${bytes(c.peakMemoryBytes)} peak`)
  if (c.tokens !== null) {
    const tk = c.tokens
    const n = (x: number | null): string => (x === null ? '?' : String(x))
    parts.push(`${n(tk.input)} in / ${n(tk.output)} out tokens`)
  }
  if (c.usd !== null) parts.push(`$${c.usd.toFixed(4)} (as reported by the agent)`)
  return `**Egress:** ${report.egress.allowed} allowed, ${report.egress.denied} denied · **Cost:** ${parts.join(', ')}`
}

function metadataSection(report: Report): string {
  const rows: [string, string][] = [
    ['run', report.runId],
    ['head', report.repo.headSha ?? 'n/a'],
    ['task sha256', report.task.sha256],
    ['model', report.agent.model ?? 'n/a'],
    ['model (usage.json)', report.cost.tokens?.model ?? 'n/a'],
    ['agent command', report.agent.command],
    ['diff sha256', report.diff.sha256 ?? 'n/a'],
    [
      'lockfiles',
      report.dependencies.length === 0
        ? 'none'
        : `${report.dependencies.length} hashed (report.json)`
    ]
  ]
  if (report.runner)
    rows.push([
      'runner',
      `${report.runner.os} ${report.runner.arch}, docker ${report.runner.docker.version ?? '?'}, node ${report.runner.node}`
    ])
  return (
    '<details><summary>Run</summary>\n\n| | |\n|---|---|\n' +
    rows.map(([k, v]) => `| ${k} | ${t(v, 300)} |`).join('\n') +
    '\n\n</details>'
  )
}

/**
 * The review comment (and job summary), rendered from report.json and diff.patch only — by the run
 * and again by every publisher, which never forwards a comment.md it did not render. The gate's
 * own lines (heading, outcome, gate) come first and are the only lines that start with `## ` or
 * `**Gate:**`; every agent-derived string is cut, escaped and placed inside a list item, a table
 * cell or a fenced block, so it can never open a line, mention anyone, or break the layout.
 */
export function renderComment(
  report: Report,
  patch: string,
  options: { evidenceLine?: string | null } = {}
): string {
  const head = [
    `## Agent Airlock: ${OUTCOME_LINE[report.outcome]}`,
    `> ${t(report.outcomeReason, 500)}`,
    gateLine(report),
    ...(report.isolation
      ? [
          `**Isolation:** ${code(report.isolation.tier, 60)} (asked: ${code(report.isolation.requested, 60)}) — ${report.isolation.reasons.map((r) => t(r, 200)).join('; ')}`
        ]
      : [])
  ]
  const body = [
    policySection(report),
    newlyFailingSection(report),
    testsSection(report),
    filesSection(report)
  ]
  const egress = renderEgress(report)
  const tail = [
    sandboxSection(report),
    egress === '' ? null : egress,
    costLine(report),
    metadataSection(report),
    options.evidenceLine ?? null
  ]
  const end = `\n\n${marker(report)}\n`
  const assemble = (diff: string | null): string =>
    [...head, ...body, diff, ...tail].filter((p): p is string => p !== null).join('\n\n') + end
  const withoutDiff = assemble(null).length
  const rendered = assemble(diffSection(patch, MAX_COMMENT_CHARS - withoutDiff - 200))
  if (rendered.length <= MAX_COMMENT_CHARS) return rendered
  // Still too long (very long names everywhere): keep whole sections from the top.
  const sections = [...head, ...body, ...tail].filter((p): p is string => p !== null)
  const note = '… comment truncated: see report.json in the run artifact'
  let out = ''
  for (const s of sections) {
    if (out.length + s.length + note.length + end.length + 4 > MAX_COMMENT_CHARS) break
    out += (out === '' ? '' : '\n\n') + s
  }
  return `${out}\n\n${note}${end}`
}
