// The comment's sections about the change: policy findings, newly failing and failed tests,
// the changed files and the diff itself.
import { codeBlock } from '../escape.js'
import { revealHidden } from '../../text-filter.js'
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
    const byId = new Map(report.tests.cases.map((c) => [c.id, c]))
    return (
      `### ❌ Newly failing tests (${newly.length})\n` +
      newly
        .slice(0, MAX_TESTS_LISTED)
        .map((c) => failingItem(c.id, byId.get(c.id)?.message))
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
      .map((c) => failingItem(c.id, c.message))
      .join('\n') +
    more(Math.min(MAX_TESTS_LISTED, failed.length), failed.length, 'tests')
  )
}

/** Lines of a failure shown under its test (report.json and the kept report files have all). */
const FAILURE_LINES = 4
const FAILURE_LINE_CHARS = 200

/**
 * One failing test: its id, and the first lines of its failure (from the report file) in a
 * fenced block inside the list item, where nothing renders.
 */
function failingItem(id: string, message: string | undefined): string {
  // Colours a runner wrote into its report are dropped; other hidden characters are shown.
  const lines = revealHidden(message ?? '', { dropAnsi: true })
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .filter((l, i, all) => l.trim() !== '' || (i > 0 && all[i - 1].trim() !== ''))
  while (lines.length > 0 && lines[0].trim() === '') lines.shift()
  const shown = lines
    .slice(0, FAILURE_LINES)
    .map((l) =>
      [...l].length > FAILURE_LINE_CHARS ? [...l].slice(0, FAILURE_LINE_CHARS).join('') + '…' : l
    )
  while (shown.length > 0 && shown[shown.length - 1].trim() === '') shown.pop()
  if (shown.length === 0) return `- ${code(id)}`
  const block = codeBlock(shown.join('\n') + (lines.length > FAILURE_LINES ? '\n…' : ''))
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')
  return `- ${code(id)}\n\n${block}\n`
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
  const causes = (tests.diagnosis ?? []).map((d) => `⚠️ ${t(d.detail, 600)}`)
  // The tests did not run (the install failed first): say so, not a table of zeros.
  if (tests.phase === null && causes.length > 0) return ['### Tests', ...causes].join('\n\n')
  const lines = ['### Tests', rows.join('\n'), ...causes]
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
  if (tests.sources.length === 0 && tests.phase !== null)
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
      `Left out as tool or build output (${d.ignored.total}; the base tree's .gitignore and the default list; not in the tree the tests ran on): ${d.ignored.entries
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
  return patch.length <= diffRoom(budget)
}

/** Lines of a diff shown open in the review; a longer one is folded. */
const OPEN_DIFF_LINES = 80

/**
 * Tool caches, build output, lockfiles and minified or generated files: shown after the source
 * files when the diff is over the review's cap.
 */
const GENERATED = [
  /(^|\/)(\.pytest_cache|__pycache__|\.mypy_cache|\.ruff_cache|\.tox|\.nox|\.venv|venv|node_modules|\.cache|\.gradle|\.next|\.nuxt|\.turbo|\.parcel-cache|coverage|htmlcov|\.nyc_output|dist|build|target|out|vendor|\.eggs|[^/]*\.egg-info)\//,
  /\.(pyc|pyo|class|o|so|min\.js|min\.css|map|snap|lock)$/,
  /(^|\/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|Pipfile\.lock|Cargo\.lock|go\.sum|composer\.lock|Gemfile\.lock|\.coverage)$/
]

export function isGenerated(file: string): boolean {
  return GENERATED.some((r) => r.test(file))
}

interface PatchSection {
  file: string
  text: string
}

/** The patch cut into its files' sections (git order). */
function sections(patch: string): PatchSection[] {
  const out: PatchSection[] = []
  const re = /^diff --git /gm
  const starts = [...patch.matchAll(re)].map((m) => m.index)
  if (starts.length === 0 || starts[0] !== 0) starts.unshift(0)
  for (let i = 0; i < starts.length; i++) {
    const text = patch.slice(starts[i], starts[i + 1] ?? patch.length)
    if (text === '') continue
    const header = /^diff --git "?a\/.*?"? "?b\/(.*?)"?$/m.exec(text)
    out.push({ file: header?.[1] ?? '', text })
  }
  return out
}

/**
 * The diff, open when it is short. Over the cap, whole files' sections are shown, source files
 * first and generated files and tool caches after them (each group in git order), and the files
 * left out are named.
 */
export function diffSection(patch: string, budget: number): string | null {
  if (patch === '') return null
  const room = diffRoom(budget)
  const lineCount = patch.split('\n').length
  const open = patch.length <= room && lineCount <= OPEN_DIFF_LINES
  const details = (summary: string, body: string): string =>
    `<details${open ? ' open' : ''}><summary>${summary}</summary>\n\n${body}\n\n</details>`
  if (patch.length <= room) return details('Diff', codeBlock(patch, 'diff'))
  const all = sections(patch)
  const ordered = [
    ...all.filter((x) => !isGenerated(x.file)),
    ...all.filter((x) => isGenerated(x.file))
  ]
  const shown: PatchSection[] = []
  const left: PatchSection[] = []
  let used = 0
  for (const x of ordered) {
    if (used + x.text.length <= room - 600) {
      shown.push(x)
      used += x.text.length
    } else left.push(x)
  }
  let text = shown.map((x) => x.text).join('')
  if (shown.length === 0 && ordered.length > 0) {
    // Not even one whole file fits: the first source file's start, cut at a line.
    const first = ordered[0].text
    text = first.slice(0, Math.max(0, first.lastIndexOf('\n', room - 600)))
    left.push(...ordered.slice(1))
  }
  const names = left.slice(0, 20).map((x) => code(x.file, 120))
  const note =
    `✂️ The diff is over the review's ${MAX_DIFF_CHARS.toLocaleString('en')}-character cap: ` +
    (shown.length === 0 && ordered.length > 0
      ? `the start of ${code(ordered[0].file, 120)} is shown`
      : `${shown.length} of ${all.length} file(s) shown whole, source files first, then generated files and tool caches`) +
    (left.length > 0
      ? `; left out: ${names.join(', ')}${left.length > 20 ? `, … (${left.length} in all)` : ''}`
      : '') +
    '. The full diff.patch is in the run artifact.'
  return `${note}\n\n${details('Diff (part)', codeBlock(text, 'diff'))}`
}
