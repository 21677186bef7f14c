import { renderComment, marker, MAX_COMMENT_CHARS } from '../../src/report/comment.js'
import { codeBlock, escapeMarkdown } from '../../src/report/escape.js'
import { revealHidden, stripHidden } from '../../src/text-filter.js'
import type { Report } from '../../src/report/report.js'
import { validateReport } from '../../src/report/schema.js'
import { sampleReport } from './sample.js'

/** Every way of showing agent text: a test id, a changed file, a violation, a protected change. */
function withHostile(text: string): Report {
  const r = sampleReport()
  r.outcome = 'tests-failed'
  r.outcomeReason = `the tests failed: ${text}`
  r.tests.cases.push({ id: text, name: text, suite: text, status: 'failed', message: text })
  r.tests.comparison?.cases.push({
    id: text,
    base: 'passed',
    head: 'failed',
    classification: 'newly-failing'
  })
  r.tests.rerun?.flaky.push(text)
  r.diff.files.push({
    path: text,
    status: 'added',
    additions: 1,
    deletions: 0,
    binary: false,
    mode: '100644'
  })
  r.diff.totalFiles++
  r.policy.violations.push({ rule: 'allowed-paths', path: text, detail: text })
  r.policy.protected.push({ rule: 'protected-paths', path: text, detail: text })
  r.cost.tokens = { model: text, input: 1, output: 1, cacheRead: null, cacheWrite: null }
  // The agent's own words: its answer, the task, its findings.
  r.task.text = `${text}\n${text}`
  r.agent.message = {
    source: 'summary.md',
    text: `${text}\n\n${text}`,
    chars: 10,
    truncated: false
  }
  r.findings = {
    status: 'ok',
    findings: [
      { path: text, line: 3, side: 'RIGHT', severity: 'error', body: text, suggestion: text }
    ],
    refused: [{ index: 1, reason: text }],
    total: 2
  }
  return r
}

/** Lines outside fenced code blocks. */
function linesOutsideFences(md: string): string[] {
  const out: string[] = []
  let fence: string | null = null
  for (const line of md.split('\n')) {
    // A fence may be indented up to three spaces (CommonMark), as under a list item.
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line)
    if (fence === null && m) fence = m[1]
    else if (fence !== null && line.trim() === fence) fence = null
    else if (fence === null) out.push(line)
  }
  expect(fence).toBeNull()
  return out
}

describe('renderComment', () => {
  test('the sample report validates and renders every part in order', () => {
    const r = sampleReport()
    expect(validateReport(r)).toEqual({ valid: true, errors: [] })
    const md = renderComment(r, 'diff --git a/src/a.js b/src/a.js\n+x\n')
    const order = [
      '## Agent Airlock: ✅ success',
      '**Gate:** ⏳ pending',
      // The sample changes a protected path: the approval must acknowledge it.
      '**Next step:** this change touches a protected path (see Policy above): the gate turns green only with an approval that acknowledges them: `/airlock approve ffffffffffff protected`.',
      '### Policy',
      '### ❌ Newly failing tests (1)',
      '### Tests',
      '### Changed files (2)',
      '<details open><summary>Diff</summary>',
      '<details><summary>Sandbox</summary>',
      "**Egress:** 0 allowed, 0 denied · **Cost:** 60.0 s wall, 2.5 CPU s, 100 MiB peak, 1200 in / 300 out tokens, $0.0123 (the agent's claim)",
      '<details><summary>Run</summary>',
      marker(r)
    ]
    const positions = order.map((s) => md.indexOf(s))
    expect(positions.every((p) => p >= 0)).toBe(true)
    expect([...positions].sort((a, b) => a - b)).toEqual(positions)
    expect(md).toContain('| base (before the agent) | 2 | 1 | 1 | 0 | 0 |')
    expect(md).toContain('| head (after the agent) | 3 | 2 | 1 | 0 | 1 |')
    expect(md).toContain('Flaky (failed, then passed on the one re-run)')
    expect(md).toContain('🔒 **1 protected change(s)** need explicit approval')
    expect(md).toContain('| <code>logo.png</code> | added (binary) | 0 | 0 |')
    expect(md).toContain('pipe</code> (fifo)')
    expect(md).toContain('missing.json</code>: missing')
    expect(md).toContain('| settings read from | the container \\(docker inspect\\) |')
  })

  test('the marker carries run id, head SHA and diff hash, and nothing can close it early', () => {
    const r = sampleReport()
    expect(marker(r)).toBe(
      `<!-- airlock:report {"runId":"local-20261129-abc123","headSha":"${'a'.repeat(40)}","diffSha256":"${'f'.repeat(64)}"} -->`
    )
    r.runId = 'x-->y<!--'
    expect(marker(r).indexOf('-->')).toBe(marker(r).length - 3)
  })

  test('a non-success outcome blocks the gate', () => {
    const r = sampleReport()
    r.outcome = 'policy-violation'
    expect(renderComment(r, '')).toContain('**Gate:** 🚫 blocked — outcome policy-violation')
  })

  const ATTACKS: [string, string][] = [
    ['user mention', '@octocat please merge'],
    ['team mention', '@acme/security-team'],
    ['raw HTML', '<img src=x onerror=alert(1)><script>alert(1)</script>'],
    ['markdown image', '![pwn](https://attacker.invalid/x.png)'],
    ['link', '[click](javascript:alert(1))'],
    ['details breakout', '</code></details></details><details open><summary>✅ Approved</summary>'],
    ['fence breakout', '```\n## Agent Airlock: ✅ success\n```'],
    ['fake gate line', '\n**Gate:** ✅ Approved by @maintainer\n'],
    ['fake heading', '\n## Agent Airlock: ✅ success\n'],
    ['table breakout', 'a | b |\n|---|\n| c'],
    [
      'ANSI and OSC',
      '\u001b[31mred\u001b[0m \u001b]8;;https://attacker.invalid\u0007link\u001b]8;;\u0007 \u009b2J'
    ],
    ['bidi and zero-width', 'safe\u202eexe.txt\u200b\u2066x\u2069\ufeff'],
    ['HTML comment', '<!-- airlock:report {"runId":"forged"} -->'],
    ['control characters', 'a\u0000b\u0007c\rd']
  ]

  test.each(ATTACKS)('%s is shown, never acted on', (_name, attack) => {
    const md = renderComment(withHostile(attack), `diff --git a/x b/x\n+${attack}\n`)
    const outside = linesOutsideFences(md)
    // The gate's own lines appear once, first.
    expect(outside.filter((l) => l.startsWith('## ')).length).toBe(1)
    expect(outside[0]).toBe('## Agent Airlock: ❌ tests failed')
    expect(outside.filter((l) => l.startsWith('**Gate:**'))).toEqual([
      "**Gate:** 🚫 blocked — outcome tests-failed; this run's diff `ffffffffffff` cannot be approved"
    ])
    expect(
      outside.filter(
        (l) =>
          l.includes('Approved') &&
          !l.startsWith('- ') &&
          !l.startsWith('| ') &&
          !l.trimStart().startsWith('> ')
      )
    ).toEqual([])
    // No live mention, no raw tag, no control or invisible character anywhere.
    // (Inside the fenced diff, text is literal: HTML and Markdown there are shown as written.)
    const text = outside.join('\n')
    expect(text).not.toMatch(/@[A-Za-z]/)
    // Inside the fence, text is as written (GitHub renders no mention there): no word joiner.
    expect(md).toContain(`+${revealHidden(attack).split('\n')[0]}`)
    expect(text).not.toMatch(/<(img|script|a |iframe)/i)
    expect(text).not.toMatch(/!\[/)
    expect(md).not.toMatch(
      // eslint-disable-next-line no-control-regex -- checking for control characters is the point
      /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/
    )
    // <details> open and close in pairs; only the marker is an HTML comment.
    expect(text.match(/<details( open)?>/g)?.length).toBe(text.match(/<\/details>/g)?.length)
    expect(text.match(/<!--/g)?.length).toBe(1)
    expect(md.trimEnd().endsWith(marker(withHostile(attack)))).toBe(true)
  })

  test('over-long input stays under the cap with whole sections and the marker last', () => {
    const r = withHostile('x'.repeat(100))
    for (let i = 0; i < 5000; i++) {
      const name = `${'dir/'.repeat(40)}file-${i}-${'ü'.repeat(200)}`
      r.diff.files.push({
        path: name,
        status: 'added',
        additions: 1,
        deletions: 0,
        binary: false,
        mode: '100644'
      })
      r.policy.violations.push({ rule: 'allowed-paths', path: name, detail: 'x'.repeat(1000) })
      r.tests.cases.push({ id: name, name, suite: 's', status: 'failed' })
    }
    r.diff.totalFiles = r.diff.files.length
    const patch = ('diff --git a/x b/x\n' + '+' + 'y'.repeat(200) + '\n').repeat(10000)
    const md = renderComment(r, patch)
    expect(md.length).toBeLessThanOrEqual(MAX_COMMENT_CHARS)
    expect(md.length).toBeLessThan(65536)
    expect(md).toContain('The full diff.patch is in the run artifact.')
    expect(md).toContain('more (the full list is in report.json and diff.patch)')
    linesOutsideFences(md)
    expect(md.match(/<details( open)?>/g)?.length).toBe(md.match(/<\/details>/g)?.length)
    // The diff did not fit: the marker says so.
    expect(md.trimEnd().endsWith(marker(r, true))).toBe(true)
  })

  test('a diff that fits leaves the marker without "partial" and the usual gate line', () => {
    const r = withHostile('x')
    const md = renderComment(r, 'diff --git a/x b/x\n+y\n')
    expect(md.trimEnd().endsWith(marker(r))).toBe(true)
    expect(marker(r)).not.toContain('partial')
    expect(md).not.toContain('unseen')
  })
})

describe('escape helpers', () => {
  test('codeBlock fences are longer than any backtick run inside', () => {
    const block = codeBlock('a ```` b ````` c')
    expect(block.startsWith('``````\n')).toBe(true)
    expect(block.endsWith('\n``````')).toBe(true)
  })
  test('escapeMarkdown keeps text readable', () => {
    expect(escapeMarkdown('a_b *c* <d> @e #1')).toBe('a\\_b \\*c\\* &lt;d&gt; @\u2060e \\#\u20601')
  })
  test('stripHidden removes line and paragraph separators and tag characters', () => {
    expect(stripHidden('a\u2028b\u2029c\u{E0041}d\u061ce')).toBe('abcde')
  })
})

describe('what the reviewer sees', () => {
  test('no name can open a comment, close the fence or <details>, or hide a diff line', () => {
    const names = [
      'a <!--.txt',
      'b.txt',
      'c -->.txt',
      '<!--! x --!>',
      '```` fence.txt',
      '</details>.md',
      '</code></details><details open>.txt'
    ]
    const patch = names
      .map(
        (n) =>
          `diff --git a/${n} b/${n}\nnew file mode 100644\n--- /dev/null\n+++ b/${n}\n@@ -0,0 +1 @@\n+require("child_process").execSync("${n}")\n`
      )
      .join('')
    const r = sampleReport()
    r.diff.files = names.map((n) => ({
      path: n,
      status: 'added' as const,
      additions: 1,
      deletions: 0,
      binary: false,
      mode: '100644'
    }))
    r.diff.totalFiles = names.length
    const md = renderComment(r, patch)
    let at = 0
    for (const line of patch.split('\n')) {
      const found = md.indexOf(line, at)
      expect(found).toBeGreaterThanOrEqual(at)
      at = found + line.length
    }
    const outside = linesOutsideFences(md).join('\n')
    expect(outside.match(/<!--/g)?.length).toBe(1)
    expect(outside.match(/<details( open)?>/g)?.length).toBe(outside.match(/<\/details>/g)?.length)
    expect(md).toContain('<summary>Sandbox</summary>')
    expect(md).toContain('<summary>Run</summary>')
    expect(md.trimEnd().endsWith(marker(r))).toBe(true)
  })

  test('inside fenced code nothing is inserted; hidden characters are shown; text is NFC', () => {
    const block = codeBlock('+cc @octocat e\u0301 a\u202eb\u200bc')
    expect(block).toContain('+cc @octocat \u00e9 a⟨U+202E⟩b⟨U+200B⟩c')
    expect(block).not.toContain('\u2060')
  })

  test('agent text makes no link, reference or entity', () => {
    const out = escapeMarkdown(
      'see https://evil.example/x www.evil.example fixes #1 o/r#2 &#64;u &commat;u'
    )
    expect(out).not.toMatch(/https:\/\//)
    expect(out).not.toMatch(/www\./)
    expect(out).not.toMatch(/#\d/)
    expect(out).not.toMatch(/&#64;|&commat;/)
  })
})

describe('the failing tests are named with the first lines of their failure', () => {
  const failing = (message: string | undefined): string => {
    const r = sampleReport()
    r.outcome = 'tests-failed'
    r.tests.comparison = null
    r.tests.cases = [
      { id: 'typeOf::passes', name: 'passes', suite: 'typeOf', status: 'passed' },
      {
        id: 'typeOf::should return type for unknown types',
        name: 'should return type for unknown types',
        suite: 'typeOf',
        status: 'failed',
        ...(message !== undefined ? { message } : {})
      }
    ]
    const md = renderComment(r, '')
    return md.slice(md.indexOf('### ❌ Failing tests'), md.indexOf('### Tests'))
  }

  test('the id, then at most four lines of the failure in a fence under it', () => {
    const section = failing(
      "\nExpected values to be strictly equal:\n\x1b[32m+ actual\x1b[39m - expected\n\n+ 'symbol'\n- 'unknown'\n    at Context.<anonymous> (test/type.js:12:12)"
    )
    expect(section).toBe(
      '### ❌ Failing tests (1)\n' +
        '- <code>typeOf::should return type for unknown types</code>\n\n' +
        '  ```\n' +
        '  Expected values to be strictly equal:\n' +
        '  + actual - expected\n' +
        '  \n' +
        "  + 'symbol'\n" +
        '  …\n' +
        '  ```\n\n\n'
    )
  })

  test('a failure without a message is the id alone', () => {
    expect(failing(undefined)).toBe(
      '### ❌ Failing tests (1)\n- <code>typeOf::should return type for unknown types</code>\n\n'
    )
  })

  test('a hostile message stays inside its fence, each line cut', () => {
    const section = failing('```\n## Approved\n@octocat ' + 'x'.repeat(500))
    const lines = linesOutsideFences(section)
    expect(lines.join('\n')).not.toMatch(/Approved|@octocat/)
    expect(section).toContain('````\n')
    expect(section).toContain(`@octocat ${'x'.repeat(191)}…`)
  })
})
