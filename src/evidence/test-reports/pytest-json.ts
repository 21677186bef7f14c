import type { CaseStatus, Node, TestCase } from './model.js'
import { clip, isNode, str } from './model.js'

const PYTEST_STATUS: Record<string, CaseStatus> = {
  passed: 'passed',
  failed: 'failed',
  error: 'failed',
  skipped: 'skipped',
  xfailed: 'skipped',
  xpassed: 'passed'
}

/** pytest-json-report (`pytest --json-report --json-report-file=PATH`). */
export function parsePytestJson(doc: Node): TestCase[] {
  const cases: TestCase[] = []
  for (const t of doc.tests as unknown[]) {
    if (!isNode(t) || typeof t.nodeid !== 'string') throw new Error('a test has no nodeid')
    const status = PYTEST_STATUS[String(t.outcome)]
    if (status === undefined) throw new Error(`unknown outcome "${String(t.outcome)}"`)
    const cut = t.nodeid.lastIndexOf('::')
    const stages = ['setup', 'call', 'teardown'].map((k) => t[k]).filter(isNode)
    const failing =
      stages.find((s) => s.outcome === 'failed') ?? stages.find((s) => 'longrepr' in s)
    const crash = failing && isNode(failing.crash) ? str(failing.crash.message) : undefined
    const seconds = stages.reduce(
      (sum, s) => sum + (typeof s.duration === 'number' ? s.duration : 0),
      0
    )
    cases.push({
      id: t.nodeid,
      name: cut < 0 ? t.nodeid : t.nodeid.slice(cut + 2),
      suite: cut < 0 ? '' : t.nodeid.slice(0, cut),
      status,
      durationMs: Math.round(seconds * 1000),
      ...(status === 'failed' ? clip(crash ?? str(failing?.longrepr)) : {})
    })
  }
  return cases
}
