// continue-context travels from the command job to the run job as one JSON input: what the
// command mode writes is what the run's edge reads back, and anything else is a clear error.
import {
  MAX_DISCUSSION_CHARS,
  MAX_DISCUSSION_COMMENTS,
  formatContinueContext,
  parseContinueContext
} from '../../src/continue-context.js'
import type { ContinueContext } from '../../src/continue-context.js'
import { checkShape } from '../../src/input-bounds.js'
import { ConfigurationError } from '../../src/errors.js'

const CTX: ContinueContext = {
  runId: '555-1',
  headSha: 'a1'.repeat(20),
  diffSha256: 'c3'.repeat(32),
  reviewUrl: 'https://github.com/octo-org/hello/pull/7#pullrequestreview-1001',
  comments: [{ author: 'octo-writer', body: 'Mention the fix.', path: 'greet.mjs', line: 3 }]
}

test('what the command writes the run reads back, and it passes the input bounds', () => {
  const raw = formatContinueContext(CTX)
  expect(() => checkShape('continue-context', raw)).not.toThrow()
  expect(parseContinueContext('continue-context', raw)).toEqual(CTX)
})

test('hostile comments: hidden and control characters made visible (the input stays valid), each capped, the oldest dropped past the count', () => {
  const comments = Array.from({ length: 30 }, (_, i) => ({
    author: 'mallory',
    body: `${i} \u202eevil\u202c \u0007 <img src=x> @octocat ${'"'.repeat(5000)}`,
    path: 'a\u0000b',
    line: i + 1
  }))
  const raw = formatContinueContext({ ...CTX, comments })
  expect(() => checkShape('continue-context', raw)).not.toThrow()
  expect(raw.length).toBeLessThanOrEqual(60_000)
  const back = parseContinueContext('continue-context', raw)
  expect(back.comments.length).toBeLessThanOrEqual(MAX_DISCUSSION_COMMENTS)
  expect(back.comments.at(-1)?.body.startsWith('29 ⟨U+202E⟩evil⟨U+202C⟩ ⟨U+0007⟩')).toBe(true)
  for (const c of back.comments)
    expect([...c.body].length).toBeLessThanOrEqual(MAX_DISCUSSION_CHARS + 10)
  expect(back.comments[0].path).toBe('a⟨U+0000⟩b')
})

test('comments in a script of three bytes a character: the value stays under the input limit in bytes', () => {
  const comments = Array.from({ length: MAX_DISCUSSION_COMMENTS }, () => ({
    author: 'octo-writer',
    body: '漢'.repeat(MAX_DISCUSSION_CHARS),
    path: null,
    line: null
  }))
  const raw = formatContinueContext({ ...CTX, comments })
  expect(Buffer.byteLength(raw, 'utf8')).toBeLessThanOrEqual(60_000)
  expect(() => checkShape('continue-context', raw)).not.toThrow()
  expect(parseContinueContext('continue-context', raw).comments.length).toBeGreaterThan(0)
})

test.each([
  ['not JSON', 'nope', /is not JSON/],
  ['a list', '[]', /not a JSON object/],
  ['a bad run id', JSON.stringify({ ...CTX, runId: '1 <b>' }), /runId/],
  ['a bad head', JSON.stringify({ ...CTX, headSha: 'main' }), /headSha/],
  ['a bad diff', JSON.stringify({ ...CTX, diffSha256: 'abc' }), /diffSha256/],
  ['no comments', JSON.stringify({ ...CTX, comments: undefined }), /comments/],
  [
    'a bad author',
    JSON.stringify({ ...CTX, comments: [{ author: '@evil user', body: 'x' }] }),
    /author/
  ]
])('%s is a ConfigurationError naming continue-context', (_n, raw, message) => {
  expect(() => parseContinueContext('continue-context', raw)).toThrow(ConfigurationError)
  expect(() => parseContinueContext('continue-context', raw)).toThrow(message)
})

test('a review address that is not https is dropped, not linked', () => {
  const raw = JSON.stringify({ ...CTX, reviewUrl: 'javascript:alert(1)' })
  expect(parseContinueContext('continue-context', raw).reviewUrl).toBeNull()
})
