import { renderComment } from '../../src/report/comment.js'
import {
  installFailedDiagnosis,
  noNetworkDiagnosis,
  sameAsBaseDiagnosis
} from '../../src/evidence/diagnosis.js'
import { validateReport } from '../../src/report/schema.js'
import { sampleReport } from './sample.js'

describe('failures that name their cause in the review', () => {
  test('after a failed install the tests section says they did not run, not that no reports were configured', () => {
    const r = sampleReport()
    r.outcome = 'infrastructure-error'
    r.tests.phase = null
    r.tests.cases = []
    r.tests.sources = []
    r.tests.baseline = null
    r.tests.comparison = null
    r.tests.rerun = null
    r.tests.diagnosis = [installFailedDiagnosis('exit code 1')]
    expect(validateReport(r).errors).toEqual([])
    const md = renderComment(r, '')
    expect(md).toContain('The tests did not run: the install phase')
    expect(md).not.toContain('No test-reports configured')
  })

  test('the same failure on the base and a network error are said, with what to do', () => {
    const r = sampleReport()
    r.outcome = 'tests-failed'
    r.tests.diagnosis = [
      sameAsBaseDiagnosis(),
      noNetworkDiagnosis('tests', 'getaddrinfo EAI_AGAIN')
    ]
    expect(validateReport(r).errors).toEqual([])
    const md = renderComment(r, '')
    expect(md).toContain('the test command is likely wrong')
    expect(md).toContain('the test phases have no network')
    expect(md).toContain('setup-allow-hosts')
    expect(md).toContain('services')
  })
})
