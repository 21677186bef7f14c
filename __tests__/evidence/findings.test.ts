import { MAX_FINDINGS, parseFindings } from '../../src/evidence/findings.js'

const doc = (findings: unknown[]): string => JSON.stringify({ findings })
const good = { path: 'src/a.js', line: 3, body: 'off by one', severity: 'error' }

describe('review.json', () => {
  test('valid findings are kept, with their defaults', () => {
    const r = parseFindings(
      doc([good, { path: 'b.py', start_line: 2, line: 4, body: 'x', suggestion: 'y\n' }])
    )
    expect(r).toEqual({
      status: 'ok',
      findings: [
        { path: 'src/a.js', line: 3, side: 'RIGHT', severity: 'error', body: 'off by one' },
        {
          path: 'b.py',
          line: 4,
          side: 'RIGHT',
          startLine: 2,
          startSide: 'RIGHT',
          severity: 'note',
          body: 'x',
          suggestion: 'y\n'
        }
      ],
      refused: [],
      total: 2
    })
  })

  test('a bad finding is refused with a note; the others are kept', () => {
    const r = parseFindings(
      doc([
        { ...good, body: 'x'.repeat(1024 * 1024) },
        { ...good, line: 0 },
        { ...good, extra: true },
        { ...good, start_line: 9 },
        { ...good, side: 'LEFT', suggestion: 'z' },
        good
      ])
    )
    expect(r.findings).toHaveLength(1)
    expect(r.refused.map((x) => x.index)).toEqual([0, 1, 2, 3, 4])
    expect(r.refused[0].reason).toMatch(/body must NOT have more than 4000 characters/)
    expect(r.refused[3].reason).toBe('start_line is after line')
  })

  test(`at most ${MAX_FINDINGS} findings; the rest are refused, never dropped silently`, () => {
    const r = parseFindings(doc(Array.from({ length: MAX_FINDINGS + 30 }, () => good)))
    expect(r.findings).toHaveLength(MAX_FINDINGS)
    expect(r.total).toBe(MAX_FINDINGS + 30)
    expect(r.refused).toHaveLength(20)
    expect(r.detail).toBe('10 more refusal(s) not listed')
  })

  test.each([
    ['not JSON', '{', 'not valid JSON'],
    ['no findings array', '{"items": []}', 'not an object with a "findings" array']
  ])('%s → malformed', (_n, text, detail) => {
    expect(parseFindings(text)).toMatchObject({
      status: 'malformed',
      detail: expect.stringContaining(detail)
    })
  })
})
