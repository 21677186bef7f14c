import { compareTests } from '../../src/evidence/compare.js'
import { summarize } from '../../src/evidence/test-reports/index.js'
import type { TestCase } from '../../src/evidence/test-reports/index.js'
import { markFlaky } from '../../src/evidence/compare.js'

const tc = (id: string, status: TestCase['status']): TestCase => ({
  id,
  name: id,
  suite: 's',
  status
})

describe('base vs head, with a re-run', () => {
  test('each test is classified; a test that passes on the re-run is flaky, not failing', () => {
    const base = [
      tc('fixed', 'failed'),
      tc('broke', 'passed'),
      tc('still', 'failed'),
      tc('ok', 'passed'),
      tc('gone', 'passed'),
      tc('wobbly', 'passed')
    ]
    const head = [
      tc('fixed', 'passed'),
      tc('broke', 'failed'),
      tc('still', 'failed'),
      tc('ok', 'passed'),
      tc('added', 'passed'),
      tc('wobbly', 'failed'),
      tc('skip', 'skipped')
    ]
    const rerun = [
      tc('broke', 'failed'),
      tc('still', 'failed'),
      tc('wobbly', 'passed'),
      tc('fixed', 'failed')
    ]
    expect(markFlaky(head, rerun)).toEqual(['wobbly'])
    expect(summarize(head)).toEqual({ total: 7, passed: 4, failed: 2, skipped: 1, flaky: 1 })
    const cmp = compareTests(base, head)
    expect(
      Object.fromEntries(
        cmp.cases.map((c) => [c.id, c.flaky ? `${c.classification} (flaky)` : c.classification])
      )
    ).toEqual({
      fixed: 'fixed',
      broke: 'newly-failing',
      still: 'still-failing',
      ok: 'passing',
      added: 'new',
      wobbly: 'passing (flaky)',
      skip: 'skipped',
      gone: 'removed'
    })
    expect(cmp.counts).toEqual({
      'newly-failing': 1,
      fixed: 1,
      'still-failing': 1,
      passing: 2,
      new: 1,
      removed: 1,
      skipped: 1
    })
  })
})
