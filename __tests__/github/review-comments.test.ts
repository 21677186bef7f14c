import type { Finding } from '../../src/evidence/findings.js'
import { commentableLines, placeFindings } from '../../src/github/review/review-comments.js'

// feature.txt: line 1 replaced, line 2 context, line 3 added; other.txt far below.
const PATCH = '@@ -1,2 +1,3 @@\n-old\n+new\n same\n+added\n@@ -10,1 +11,1 @@\n-x\n+y'
const FILES = [{ filename: 'feature.txt', patch: PATCH }, { filename: 'logo.png' }]
const f = (over: Partial<Finding>): Finding => ({
  path: 'feature.txt',
  line: 1,
  side: 'RIGHT',
  severity: 'warning',
  body: 'why',
  ...over
})

test('the lines of a patch GitHub takes comments on, per side and hunk', () => {
  const l = commentableLines(PATCH)
  expect([...l.RIGHT.entries()]).toEqual([
    [1, 0],
    [2, 0],
    [3, 0],
    [11, 1]
  ])
  expect([...l.LEFT.entries()]).toEqual([
    [1, 0],
    [2, 0],
    [10, 1]
  ])
})

test('findings on the diff become comments (a suggestion as a suggestion block); the rest say why', () => {
  const findings = [
    f({ suggestion: 'newer\n' }),
    f({ line: 3, startLine: 1 }),
    f({ line: 1, side: 'LEFT' }),
    f({ line: 5 }),
    f({ line: 11, startLine: 2 }),
    f({ path: 'README.md' }),
    f({ path: 'logo.png' }),
    f({ body: '@octocat <b>x</b>' })
  ]
  const p = placeFindings(findings, FILES)
  expect(p.comments.map((c) => [c.path, c.line, c.side, c.start_line])).toEqual([
    ['feature.txt', 1, 'RIGHT', undefined],
    ['feature.txt', 3, 'RIGHT', 1],
    ['feature.txt', 1, 'LEFT', undefined],
    ['feature.txt', 1, 'RIGHT', undefined]
  ])
  expect(p.comments[0].body).toContain('```suggestion\nnewer\n```')
  expect(p.comments[3].body).toContain('> @\u2060octocat &lt;b&gt;x&lt;/b&gt;')
  expect([...p.unanchored]).toEqual([
    [3, "line 5 (RIGHT) is not in the pull request's diff"],
    [4, 'lines 2–11 are not within one hunk of the diff'],
    [5, "the file is not part of the pull request's diff"],
    [6, 'GitHub shows no line diff for this file']
  ])
})

test('without the pull request files, every finding stays in the body', () => {
  expect([...placeFindings([f({})], null).unanchored.values()]).toEqual([
    "the pull request's files could not be read"
  ])
})
