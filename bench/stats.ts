// Pure helpers of the benchmark: medians, ratios, the interleaved schedule and the result table.

/** One comparison: our path (A) against the plain Docker baseline (B), in milliseconds. */
export interface Comparison {
  id: string
  title: string
  /** Highest acceptable ratio A/B. */
  target: number
  ours: number[]
  baseline: number[]
}

export interface Summary {
  id: string
  title: string
  runs: number
  oursMedian: number
  baselineMedian: number
  ratio: number
  target: number
  pass: boolean
}

/** Median of the samples (mean of the two middle ones for an even count). */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) throw new RangeError('median of no samples')
  for (const s of samples) {
    if (!Number.isFinite(s)) throw new RangeError(`not a finite sample: ${s}`)
  }
  const sorted = [...samples].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** How many times slower our path is than the baseline (1.00 = as fast). */
export function ratio(ours: number, baseline: number): number {
  if (!(baseline > 0)) throw new RangeError(`baseline must be positive, got ${baseline}`)
  return ours / baseline
}

/** The order of the timed runs: A, B, A, B, ... so that drift in the machine's load hits both. */
export function interleavedSchedule(rounds: number): ('A' | 'B')[] {
  if (!Number.isInteger(rounds) || rounds < 1) {
    throw new RangeError(`rounds must be a positive integer, got ${rounds}`)
  }
  const order: ('A' | 'B')[] = []
  for (let i = 0; i < rounds; i++) order.push('A', 'B')
  return order
}

export function summarize(c: Comparison): Summary {
  if (c.ours.length !== c.baseline.length) {
    throw new RangeError(
      `${c.id}: ${c.ours.length} runs of ours against ${c.baseline.length} of the baseline`
    )
  }
  const oursMedian = median(c.ours)
  const baselineMedian = median(c.baseline)
  const r = ratio(oursMedian, baselineMedian)
  return {
    id: c.id,
    title: c.title,
    runs: c.ours.length,
    oursMedian,
    baselineMedian,
    ratio: r,
    target: c.target,
    // Compared as printed (two decimals), so the verdict never contradicts the table.
    pass: Math.round(r * 100) <= Math.round(c.target * 100)
  }
}

export function formatMs(ms: number): string {
  return ms >= 100 ? `${Math.round(ms)} ms` : `${ms.toFixed(1)} ms`
}

export function formatRatio(r: number): string {
  return `${r.toFixed(2)}×`
}

const HEADER = ['', 'benchmark', 'runs', 'median ours', 'median baseline', 'ratio', 'target', '']

/** A plain-text table, columns padded; numbers right-aligned. */
export function formatTable(rows: readonly Summary[]): string {
  const cells = rows.map((s) => [
    s.id,
    s.title,
    String(s.runs),
    formatMs(s.oursMedian),
    formatMs(s.baselineMedian),
    formatRatio(s.ratio),
    `≤ ${formatRatio(s.target)}`,
    s.pass ? 'pass' : 'MISS'
  ])
  const all = [HEADER, ...cells]
  const widths = HEADER.map((_, col) => Math.max(...all.map((r) => [...r[col]].length)))
  const numeric = new Set([2, 3, 4, 5, 6])
  const line = (r: string[]): string =>
    r
      .map((cell, col) => {
        const pad = ' '.repeat(widths[col] - [...cell].length)
        return numeric.has(col) ? pad + cell : cell + pad
      })
      .join('  ')
      .trimEnd()
  const rule = widths.map((w) => '-'.repeat(w)).join('  ')
  return [line(HEADER), rule, ...cells.map(line)].join('\n')
}

/** The same table in Markdown, for docs/BENCHMARKS.md. */
export function formatMarkdown(rows: readonly Summary[]): string {
  const head =
    '| | benchmark | runs | median ours | median baseline | ratio | target | result |\n' +
    '|---|---|--:|--:|--:|--:|--:|---|'
  const body = rows.map(
    (s) =>
      `| ${s.id} | ${s.title} | ${s.runs} | ${formatMs(s.oursMedian)} | ${formatMs(s.baselineMedian)} | ${formatRatio(s.ratio)} | ≤ ${formatRatio(s.target)} | ${s.pass ? 'pass' : 'miss'} |`
  )
  return [head, ...body].join('\n')
}

/** One run's fixed costs by step (ms), as report.json and the benchmark's clock give them. */
export type StepTimes = Record<string, number | undefined>

/**
 * The median of each step over the runs, one line each, in the order given (a step no run
 * recorded is left out); `indent` marks the steps that run alongside the one before them.
 */
export function formatBreakdown(
  runs: readonly StepTimes[],
  steps: readonly { key: string; label: string; indent?: boolean }[]
): string {
  const lines: string[] = []
  const width = Math.max(...steps.map((s) => s.label.length + (s.indent ? 2 : 0)))
  for (const s of steps) {
    const values = runs.map((r) => r[s.key]).filter((v): v is number => v !== undefined)
    if (values.length === 0) continue
    const label = (s.indent ? '  ' : '') + s.label
    lines.push(`  ${label.padEnd(width)}  ${formatMs(median(values)).padStart(8)}`)
  }
  return lines.join('\n')
}
