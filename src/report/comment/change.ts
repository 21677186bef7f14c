// The comment's sections about the change: policy findings, newly failing and failed tests,
// the changed files and the diff itself.
import { codeBlock } from '../escape.js'
import type { Report } from '../report.js'
import { code, more, t } from './text.js'

const MAX_DIFF_CHARS = 20_000
const MAX_FILES = 100
const MAX_TESTS_LISTED = 20
const MAX_FINDINGS = 30

export function policySection(report: Report): string | null {
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

export function newlyFailingSection(report: Report): string | null {
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

export function testsSection(report: Report): string | null {
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

export function filesSection(report: Report): string {
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

/** The characters of the diff a section of `budget` characters can show. */
function diffRoom(budget: number): number {
  return Math.max(0, Math.min(MAX_DIFF_CHARS, budget))
}

/** Whether diffSection(patch, budget) shows the whole diff (an empty diff has nothing to hide). */
export function diffShownInFull(patch: string, budget: number): boolean {
  const room = diffRoom(budget)
  return patch === '' || (room >= 200 && patch.length <= room)
}

export function diffSection(patch: string, budget: number): string | null {
  if (patch === '') return null
  const room = diffRoom(budget)
  const note = '… diff truncated here: the full diff.patch is in the run artifact'
  let shown = patch
  if (patch.length > room) {
    const cut = patch.lastIndexOf('\n', Math.max(0, room - note.length))
    shown = patch.slice(0, Math.max(0, cut)) + '\n' + note
  }
  if (room < 200) shown = note
  return `<details><summary>Diff</summary>\n\n${codeBlock(shown, 'diff')}\n\n</details>`
}
