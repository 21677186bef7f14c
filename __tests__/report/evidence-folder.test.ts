import { InvalidEvidenceError, parseReport } from '../../src/report/evidence-folder.js'
import { HEAD, DIFF, report } from '../github/report-fixture.js'

describe('report validation (untrusted artifact)', () => {
  test('accepts a well-formed report', () => {
    expect(parseReport(report())).toMatchObject({ runId: '12-1', headSha: HEAD, diffSha256: DIFF })
  })
  test.each([
    ['schemaVersion 2', { schemaVersion: 2 }, /schemaVersion 2/],
    ['run id with markup', { runId: '1 <b>' }, /runId/],
    ['unknown outcome', { outcome: 'great' }, /outcome must be/],
    ['head not a sha', { repo: { headSha: 'main', baseSha: null } }, /headSha/],
    ['diff sha wrong', { diff: { sha256: 'abc', files: [] } }, /diff.sha256/],
    ['violations not array', { policy: { violations: {} } }, /violations/],
    ['no image', { image: undefined }, /image must be/]
  ])('%s is refused', (_name, overrides, message) => {
    expect(() => parseReport(report(overrides))).toThrow(InvalidEvidenceError)
    expect(() => parseReport(report(overrides))).toThrow(message)
  })
})
