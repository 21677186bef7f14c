import { parseReport } from '../../src/report/evidence-folder.js'
import { gateAfterRun, gateApproved } from '../../src/github/gate/gate.js'
import { DIFF, report } from './report-fixture.js'

describe('gate payloads', () => {
  test.each([
    ['success', [], 'pending', `awaiting approval of diff ${DIFF.slice(0, 12)}`],
    ['tests-failed', [], 'pending', `awaiting approval of diff ${DIFF.slice(0, 12)}`],
    ['policy-violation', [], 'failure', 'policy-violation: not approvable; run 12-1'],
    ['tests-failed', ['tests-failed'], 'failure', 'tests-failed: not approvable; run 12-1']
  ])('%s with fail-outcomes %j → %s', (outcome, fail, state, description) => {
    const facts = parseReport(report({ outcome }))
    const status = gateAfterRun(
      facts,
      ['policy-violation', ...(fail as never[])],
      'airlock/approval'
    )
    expect(status).toEqual({ state, description, context: 'airlock/approval' })
  })
  test('descriptions stay within 140 characters', () => {
    expect(gateApproved('x'.repeat(200), DIFF, 'c').description.length).toBeLessThanOrEqual(140)
  })
})
