import {
  formatMarkdown,
  formatMs,
  formatRatio,
  formatTable,
  interleavedSchedule,
  median,
  ratio,
  summarize
} from '../../bench/stats.js'
import type { Comparison } from '../../bench/stats.js'

describe('median', () => {
  it.each([
    [[5], 5],
    [[3, 1, 2], 2],
    [[4, 1, 3, 2], 2.5],
    [[10, 10, 10, 1000], 10],
    [[2.5, -1, 7], 2.5]
  ])('median(%j) = %d', (samples, expected) => {
    expect(median(samples)).toBe(expected)
  })

  it('does not reorder its input', () => {
    const samples = [3, 1, 2]
    median(samples)
    expect(samples).toEqual([3, 1, 2])
  })

  it('refuses no samples and non-finite ones', () => {
    expect(() => median([])).toThrow(RangeError)
    expect(() => median([1, Number.NaN])).toThrow(/finite/)
    expect(() => median([1, Number.POSITIVE_INFINITY])).toThrow(/finite/)
  })
})

describe('ratio', () => {
  it('is ours over the baseline', () => {
    expect(ratio(110, 100)).toBeCloseTo(1.1)
    expect(ratio(50, 200)).toBe(0.25)
  })

  it('refuses a zero, negative or NaN baseline', () => {
    expect(() => ratio(1, 0)).toThrow(RangeError)
    expect(() => ratio(1, -5)).toThrow(RangeError)
    expect(() => ratio(1, Number.NaN)).toThrow(RangeError)
  })
})

describe('interleavedSchedule', () => {
  it('alternates A and B, A first, rounds times', () => {
    expect(interleavedSchedule(3)).toEqual(['A', 'B', 'A', 'B', 'A', 'B'])
    expect(interleavedSchedule(10).filter((x) => x === 'A')).toHaveLength(10)
  })

  it('refuses a non-positive or fractional count', () => {
    expect(() => interleavedSchedule(0)).toThrow(RangeError)
    expect(() => interleavedSchedule(2.5)).toThrow(RangeError)
  })
})

const comparison = (ours: number[], baseline: number[], target = 1.1): Comparison => ({
  id: 'P1',
  title: 'lifecycle',
  target,
  ours,
  baseline
})

describe('summarize', () => {
  it('takes the medians, their ratio, and the verdict', () => {
    const s = summarize(comparison([100, 300, 110], [100, 90, 1000]))
    expect(s).toEqual({
      id: 'P1',
      title: 'lifecycle',
      runs: 3,
      oursMedian: 110,
      baselineMedian: 100,
      ratio: 1.1,
      target: 1.1,
      pass: true
    })
  })

  it('misses when the ratio is above the target', () => {
    expect(summarize(comparison([112], [100])).pass).toBe(false)
    expect(summarize(comparison([50], [100])).pass).toBe(true)
  })

  it('judges the ratio as printed, so the table never contradicts itself', () => {
    // 1.104 prints as 1.10× and passes a 1.10× target; 1.106 prints as 1.11× and misses.
    expect(summarize(comparison([110.4], [100])).pass).toBe(true)
    expect(summarize(comparison([110.6], [100])).pass).toBe(false)
  })

  it('refuses unequal run counts', () => {
    expect(() => summarize(comparison([1, 2], [1]))).toThrow(/2 runs of ours against 1/)
  })
})

describe('formatting', () => {
  it('formats milliseconds and ratios', () => {
    expect(formatMs(1234.4)).toBe('1234 ms')
    expect(formatMs(12.345)).toBe('12.3 ms')
    expect(formatRatio(1.149)).toBe('1.15×')
    expect(formatRatio(0.5)).toBe('0.50×')
  })

  it('prints an aligned table with one row per comparison and the verdict', () => {
    const rows = [
      summarize(comparison([900, 1000], [1000, 1000])),
      { ...summarize(comparison([3000], [2000], 1.15)), id: 'P2', title: 'whole run' }
    ]
    const lines = formatTable(rows).split('\n')
    expect(lines).toHaveLength(4)
    expect(lines[0]).toMatch(/benchmark\s+runs\s+median ours\s+median baseline\s+ratio\s+target/)
    expect(lines[1]).toMatch(/^-+( +-+)+$/)
    expect(lines[2]).toMatch(/^P1\s+lifecycle\s+2\s+950 ms\s+1000 ms\s+0\.95×\s+≤ 1\.10×\s+pass$/)
    expect(lines[3]).toMatch(/^P2\s+whole run\s+1\s+3000 ms\s+2000 ms\s+1\.50×\s+≤ 1\.15×\s+MISS$/)
    // Right-aligned numeric columns: the ratio column ends at the same place on every row.
    const end = (l: string): number => l.indexOf('×') + 1
    expect(end(lines[2])).toBe(end(lines[3]))
  })

  it('prints a Markdown table', () => {
    const md = formatMarkdown([summarize(comparison([120], [100]))])
    expect(md.split('\n')).toEqual([
      '| | benchmark | runs | median ours | median baseline | ratio | target | result |',
      '|---|---|--:|--:|--:|--:|--:|---|',
      '| P1 | lifecycle | 1 | 120 ms | 100 ms | 1.20× | ≤ 1.10× | miss |'
    ])
  })
})
