import { failsLikeBase } from './diagnosis.js'
import type { TestCase } from './test-reports/index.js'

export type Classification =
  'newly-failing' | 'fixed' | 'still-failing' | 'passing' | 'new' | 'removed' | 'skipped'

export interface ComparedCase {
  id: string
  base: TestCase['status'] | null
  head: TestCase['status'] | null
  classification: Classification
  /** Failed, then passed when re-run (in the result tree's run). */
  flaky?: boolean
}

export interface Comparison {
  counts: Record<Classification, number>
  cases: ComparedCase[]
}

function classify(
  base: TestCase['status'] | null,
  head: TestCase['status'] | null
): Classification {
  if (head === null) return 'removed'
  if (head === 'skipped') return 'skipped'
  if (base === null) return head === 'failed' ? 'newly-failing' : 'new'
  if (head === 'failed') return base === 'failed' ? 'still-failing' : 'newly-failing'
  return base === 'failed' ? 'fixed' : 'passing'
}

/** Classifies each test by what the change did to it: base tree's results vs the result tree's. */
export function compareTests(base: TestCase[], head: TestCase[]): Comparison {
  const baseById = new Map(base.map((c) => [c.id, c.status]))
  const headById = new Map(head.map((c) => [c.id, c.status]))
  const flakyIds = new Set(head.filter((c) => c.flaky === true).map((c) => c.id))
  const ids = [...new Set([...head.map((c) => c.id), ...base.map((c) => c.id)])]
  const counts: Record<Classification, number> = {
    'newly-failing': 0,
    fixed: 0,
    'still-failing': 0,
    passing: 0,
    new: 0,
    removed: 0,
    skipped: 0
  }
  const cases = ids.map((id) => {
    const b = baseById.get(id) ?? null
    const h = headById.get(id) ?? null
    const classification = classify(b, h)
    counts[classification]++
    return { id, base: b, head: h, classification, ...(flakyIds.has(id) ? { flaky: true } : {}) }
  })
  return { counts, cases }
}

/**
 * Whether the tests get their one re-run (on a fresh copy of the agent's tree): they ran to the
 * end and something failed — unless the unchanged base tree failed the same way (`baseline`): then
 * the command, not chance, fails, and a re-run proves nothing.
 */
export function shouldRerun(
  run: { timedOut: boolean; cancelled: boolean; error?: string; exitCode: number | null },
  cases: TestCase[],
  baseline?: { exitCode: number | null; cases: TestCase[] } | null
): boolean {
  if (run.timedOut || run.cancelled || run.error !== undefined) return false
  if (baseline && failsLikeBase(baseline, { exitCode: run.exitCode, cases })) return false
  return run.exitCode !== 0 || cases.some((c) => c.status === 'failed')
}

/**
 * Marks the tests that failed in the first run and passed in the re-run as flaky (and passed);
 * returns their ids.
 */
export function markFlaky(first: TestCase[], rerun: TestCase[]): string[] {
  const again = new Map(rerun.map((c) => [c.id, c.status]))
  const flaky: string[] = []
  for (const c of first) {
    if (c.status === 'failed' && again.get(c.id) === 'passed') {
      c.status = 'passed'
      c.flaky = true
      flaky.push(c.id)
    }
  }
  return flaky
}
