// A follow-up's review says which run it continues (linked to that run's review), whether it
// started from that run's patch, and that it supersedes the earlier review.
import { renderComment } from '../../src/report/comment.js'
import { validateReport } from '../../src/report/schema.js'
import type { Report } from '../../src/report/report.js'
import { sampleReport } from './sample.js'

function withContinuation(c: Partial<NonNullable<Report['continuation']>> = {}): Report {
  return {
    ...sampleReport(),
    continuation: {
      runId: '555-1',
      headSha: 'a1'.repeat(20),
      diffSha256: 'c3'.repeat(32),
      carried: true,
      note: "the earlier run's patch on a1a1a1a1a1a1 is applied to the workspace; this run adds to it",
      reviewUrl: 'https://github.com/octo-org/hello/pull/7#pullrequestreview-1001',
      comments: 2,
      ...c
    }
  }
}

const PULL = 'https://github.com/octo-org/hello/pull/7'

test('the line: the earlier run linked to its review, the patch carried, superseded', () => {
  const report = withContinuation()
  expect(validateReport(report).valid).toBe(true)
  const body = renderComment(report, '', { pullUrl: PULL })
  expect(body).toContain(
    '**Continues:** [run <code>555-1</code>](https://github.com/octo-org/hello/pull/7#pullrequestreview-1001) — the earlier run'
  )
  expect(body).toContain(
    'this review supersedes the earlier one. The agent was given 2 review comment(s)'
  )
})

test.each([
  'https://evil.invalid/x)<img src=x onerror=alert(1)>',
  'https://evil.invalid/x "title"',
  'https://[::1]/x',
  // A well-formed address that is not a pull request review's.
  'https://evil.invalid/login',
  'https://github.com/octo-org/hello/pull/7#pullrequestreview-1001/../../x'
])('a review address that could break out of the link (%s) is not linked', (url) => {
  const body = renderComment(withContinuation({ reviewUrl: url }), '', { pullUrl: PULL })
  expect(body).toContain('**Continues:** run <code>555-1</code> — ')
  expect(body).not.toContain('onerror=alert')
})

test.each([
  'https://evil.test/octo-org/hello/pull/7#pullrequestreview-1001',
  'https://github.com/mallory/phish/pull/7#pullrequestreview-1001',
  'https://github.com/octo-org/hello/pull/8#pullrequestreview-1001'
])(
  'the link is built from the review id on this pull request, never taken from the report (%s)',
  (url) => {
    const body = renderComment(withContinuation({ reviewUrl: url }), '', { pullUrl: PULL })
    expect(body).toContain(
      `**Continues:** [run <code>555-1</code>](${PULL}#pullrequestreview-1001) — the earlier run`
    )
    expect(body).not.toContain('evil.test')
    expect(body).not.toContain('mallory/phish')
  }
)

test('without the pull request address (the CLI) the run is named, not linked', () => {
  expect(renderComment(withContinuation(), '')).toContain(
    '**Continues:** run <code>555-1</code> — '
  )
})

test('a hostile note is escaped', () => {
  const body = renderComment(withContinuation({ note: '@octocat <b>x</b> \u202eevil' }), '')
  expect(body).not.toContain('<b>')
  expect(body).not.toContain('\u202e')
  expect(body).not.toMatch(/@octocat/)
})

test('the schema refuses a continuation that is not one', () => {
  const bad = withContinuation({ runId: '1 <b>' })
  expect(validateReport(bad).valid).toBe(false)
})
