import { shouldRerun } from '../../src/evidence/compare.js'
import { failsLikeBase, networkError } from '../../src/evidence/diagnosis.js'
import type { TestCase } from '../../src/evidence/test-reports/index.js'

const tc = (id: string, status: TestCase['status']): TestCase => ({
  id,
  name: id,
  suite: 's',
  status
})
const ran = (exitCode: number | null) => ({ timedOut: false, cancelled: false, exitCode })

describe('the same failure on the base tree', () => {
  test('the same failing ids, or both non-zero without cases, fail like the base', () => {
    const failing = [tc('a', 'failed'), tc('b', 'passed')]
    expect(failsLikeBase({ exitCode: 1, cases: failing }, { exitCode: 1, cases: failing })).toBe(
      true
    )
    expect(failsLikeBase({ exitCode: 127, cases: [] }, { exitCode: 2, cases: [] })).toBe(true)
    // Another test fails after the change: the change may be at fault.
    expect(
      failsLikeBase(
        { exitCode: 1, cases: failing },
        { exitCode: 1, cases: [tc('a', 'failed'), tc('b', 'failed')] }
      )
    ).toBe(false)
    expect(failsLikeBase({ exitCode: 0, cases: [] }, { exitCode: 1, cases: [] })).toBe(false)
    expect(failsLikeBase({ exitCode: null, cases: [] }, { exitCode: 1, cases: [] })).toBe(false)
  })

  test('a failure the base shares gets no re-run; one it does not share does', () => {
    const cases = [tc('a', 'failed')]
    expect(shouldRerun(ran(1), cases, { exitCode: 1, cases: [tc('a', 'failed')] })).toBe(false)
    expect(shouldRerun(ran(1), [], { exitCode: 1, cases: [] })).toBe(false)
    expect(shouldRerun(ran(1), cases, { exitCode: 0, cases: [tc('a', 'passed')] })).toBe(true)
    expect(shouldRerun(ran(1), cases, null)).toBe(true)
    expect(shouldRerun(ran(1), cases)).toBe(true)
  })
})

describe('network errors in a test log', () => {
  test.each([
    ['npm ERR! getaddrinfo EAI_AGAIN registry.npmjs.org', 'getaddrinfo EAI_AGAIN'],
    ['Error: getaddrinfo ENOTFOUND db.example', 'getaddrinfo ENOTFOUND'],
    ['connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'],
    ['OSError: [Errno 101] Network is unreachable', 'Network is unreachable'],
    ['curl: (6) Could not resolve host: example.org', 'Could not resolve host']
  ])('%s', (log, matched) => {
    expect(networkError(`some output\n${log}\nmore`)).toBe(matched)
  })

  test('a log without one names none', () => {
    expect(networkError('1 failing\nAssertionError: expected 2 to equal 3')).toBeNull()
  })
})
