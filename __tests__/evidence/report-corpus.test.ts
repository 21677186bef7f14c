// The report corpus (fixtures/reports/corpus/): reports written by the real tools on the same
// kinds of cases, each read back and held to what the tool itself printed in the same run —
// its counts and the names of its failing tests (printed.txt beside each report).
import * as fs from 'node:fs'
import * as path from 'node:path'
import { parseTestReport, summarize } from '../../src/evidence/test-reports/index.js'
import type { ReportFormat, TestCase } from '../../src/evidence/test-reports/index.js'

const CORPUS = path.join(process.cwd(), 'fixtures', 'reports', 'corpus')
const read = (file: string): string => fs.readFileSync(path.join(CORPUS, file), 'utf8')

/** What a tool printed: its counts (in the model's terms) and its failing tests' names. */
interface Printed {
  passed: number
  failed: number
  skipped: number
  failing: string[]
}

const num = (text: string, re: RegExp): number => Number(re.exec(text)?.[1] ?? 0)

/** Each tool's console output, read the way a person reads it. */
const PRINTED: Record<string, (text: string) => Printed> = {
  // "  4 passing (6ms)", "  1 pending", "  2 failing"; the tree marks failures "  1) title".
  mocha: (text) => {
    const tree = text.slice(0, text.search(/^\s+\d+ passing/m))
    return {
      passed: num(text, /^\s+(\d+) passing/m),
      failed: num(text, /^\s+(\d+) failing/m),
      skipped: num(text, /^\s+(\d+) pending/m),
      failing: [...tree.matchAll(/^\s+\d+\) (.+)$/gm)].map((m) => m[1])
    }
  },
  // "Tests:       2 failed, 1 skipped, 4 passed, 7 total"; "  ● cart › applies discount".
  jest: (text) => {
    const line = /^Tests:\s+(.*)$/m.exec(text)?.[1] ?? ''
    return {
      passed: num(line, /(\d+) passed/),
      failed: num(line, /(\d+) failed/),
      skipped: num(line, /(\d+) skipped/) + num(line, /(\d+) todo/),
      failing: [...text.matchAll(/^\s+● (.+)$/gm)].map((m) => m[1].split(' › ').at(-1) ?? '')
    }
  },
  // "      Tests  2 failed | 4 passed | 1 skipped (7)"; " FAIL  vitest.test.js > cart > applies discount".
  vitest: (text) => {
    const line = /^\s+Tests\s+(.*)$/m.exec(text)?.[1] ?? ''
    return {
      passed: num(line, /(\d+) passed/),
      failed: num(line, /(\d+) failed/),
      skipped: num(line, /(\d+) skipped/) + num(line, /(\d+) todo/),
      failing: [...text.matchAll(/^ FAIL {2}.+? > (.+)$/gm)].map(
        (m) => m[1].split(' > ').at(-1) ?? ''
      )
    }
  },
  // "ℹ pass 3", "ℹ fail 2", "ℹ skipped 1", "ℹ todo 0"; after "✖ failing tests:", "✖ name (1.2ms)".
  node: (text) => ({
    passed: num(text, /^ℹ pass (\d+)/m),
    failed: num(text, /^ℹ fail (\d+)/m) + num(text, /^ℹ cancelled (\d+)/m),
    skipped: num(text, /^ℹ skipped (\d+)/m) + num(text, /^ℹ todo (\d+)/m),
    failing: [
      ...text.slice(text.indexOf('✖ failing tests:')).matchAll(/^✖ (.+) \([\d.]+ms\)$/gm)
    ].map((m) => m[1])
  }),
  // "== 2 failed, 5 passed, 1 skipped, 1 xfailed, 1 error in 2.60s =="; "FAILED <node id> - …".
  // An error (in a fixture) is a failure of the test; an expected failure (xfail) is skipped.
  pytest: (text) => {
    const line = /^=+ (.*) in [\d.]+s/m.exec(text.split('\n').reverse().join('\n'))?.[1] ?? ''
    return {
      passed: num(line, /(\d+) passed/) + num(line, /(\d+) xpassed/),
      failed: num(line, /(\d+) failed/) + num(line, /(\d+) errors?/),
      skipped: num(line, /(\d+) skipped/) + num(line, /(\d+) xfailed/),
      failing: [...text.matchAll(/^(?:FAILED|ERROR) (\S+)/gm)].map((m) => m[1])
    }
  },
  // go test -v: one "--- PASS/FAIL/SKIP: name" per test and subtest.
  go: (text) => ({
    passed: (text.match(/^\s*--- PASS: /gm) ?? []).length,
    failed: (text.match(/^\s*--- FAIL: /gm) ?? []).length,
    skipped: (text.match(/^\s*--- SKIP: /gm) ?? []).length,
    failing: [...text.matchAll(/^\s*--- FAIL: (\S+)/gm)].map((m) => m[1])
  })
}

interface Entry {
  file: string
  format: ReportFormat
  tool: keyof typeof PRINTED
  /** How the failing names printed are found among the cases. */
  match: 'name-ends' | 'id'
  /** Tests the tool printed that this reporter leaves out of its file, by status (and why). */
  omits?: Partial<Record<'passed' | 'failed' | 'skipped', number>>
}

const CORPUS_FILES: Entry[] = [
  { file: 'mocha/xunit.xml', format: 'junit', tool: 'mocha', match: 'name-ends' },
  // mocha-junit-reporter writes no <testcase> for a pending test unless its includePending
  // option is set (its README): the one pending test is not in the file.
  {
    file: 'mocha/mocha-junit-reporter.xml',
    format: 'junit',
    tool: 'mocha',
    match: 'name-ends',
    omits: { skipped: 1 }
  },
  { file: 'jest/jest-junit.xml', format: 'junit', tool: 'jest', match: 'name-ends' },
  { file: 'jest/jest.json', format: 'jest-json', tool: 'jest', match: 'name-ends' },
  { file: 'vitest/vitest-junit.xml', format: 'junit', tool: 'vitest', match: 'name-ends' },
  { file: 'vitest/vitest.json', format: 'jest-json', tool: 'vitest', match: 'name-ends' },
  { file: 'node20/node-junit.xml', format: 'junit', tool: 'node', match: 'name-ends' },
  { file: 'node24/node-junit.xml', format: 'junit', tool: 'node', match: 'name-ends' },
  { file: 'pytest/junit-xunit2.xml', format: 'junit', tool: 'pytest', match: 'id' },
  { file: 'pytest/junit-xunit1.xml', format: 'junit', tool: 'pytest', match: 'id' },
  { file: 'pytest/pytest-json-report.json', format: 'pytest-json', tool: 'pytest', match: 'id' },
  { file: 'go/go-test.json', format: 'go-test-json', tool: 'go', match: 'name-ends' }
]

describe('the report corpus: counts and failing names equal to what each tool printed', () => {
  test('every report file of the corpus is in the table', () => {
    const files = fs
      .readdirSync(CORPUS, { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(xml|json)$/.test(f) && !f.startsWith('src'))
      .sort()
    expect(files).toEqual(CORPUS_FILES.map((e) => e.file).sort())
  })

  test.each(CORPUS_FILES)('$file', ({ file, format, tool, match, omits }) => {
    const printed = PRINTED[tool](read(path.join(path.dirname(file), 'printed.txt')))
    // The printed output was read at all: the suites have passing and failing tests.
    expect(printed.passed).toBeGreaterThan(0)
    expect(printed.failing.length).toBe(printed.failed)

    const parsed = parseTestReport(fs.readFileSync(path.join(CORPUS, file)))
    expect(parsed.error).toBeUndefined()
    expect(parsed.format).toBe(format)
    const s = summarize(parsed.cases)
    expect({ passed: s.passed, failed: s.failed, skipped: s.skipped }).toEqual({
      passed: printed.passed - (omits?.passed ?? 0),
      failed: printed.failed - (omits?.failed ?? 0),
      skipped: printed.skipped - (omits?.skipped ?? 0)
    })
    const failed = parsed.cases.filter((c) => c.status === 'failed')
    const found = (name: string): TestCase | undefined =>
      failed.find((c) => (match === 'id' ? c.id === name : c.name.endsWith(name)))
    for (const name of printed.failing) {
      const c = found(name)
      expect(c).toBeDefined()
      // Each failure says why, from its first line.
      expect((c?.message ?? '').split('\n')[0].trim()).not.toBe('')
    }
    // Ids are unique within a file, and never empty.
    const ids = parsed.cases.map((c) => c.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) expect(id).not.toMatch(/^::|::$/)
  })

  test('mocha xunit: the failure without attributes is counted, with its message', () => {
    const cases = parseTestReport(fs.readFileSync(path.join(CORPUS, 'mocha/xunit.xml'))).cases
    expect(cases.find((c) => c.name === 'should return type for unknown types')).toMatchObject({
      id: 'typeOf::should return type for unknown types',
      status: 'failed',
      message: expect.stringMatching(/^Expected values to be strictly equal:/)
    })
    // Numeric character references (mocha writes every non-ASCII character as one) are decoded.
    expect(cases.map((c) => c.name)).toContain('gère « les accents » — 日本語 <&>')
  })

  test('pytest: ids are pytest node ids, in JUnit (both families) as in pytest-json-report', () => {
    const ids = (file: string): string[] =>
      parseTestReport(fs.readFileSync(path.join(CORPUS, file))).cases.map((c) => c.id)
    const fromJson = ids('pytest/pytest-json-report.json')
    expect(ids('pytest/junit-xunit2.xml')).toEqual(fromJson)
    expect(ids('pytest/junit-xunit1.xml')).toEqual(fromJson)
    expect(fromJson).toContain('tests/test_cart.py::TestTotals::TestWithTax::test_sums_prices[1-2]')
  })

  test('go: the failure message is the test output, without the runner framing lines', () => {
    const cases = parseTestReport(fs.readFileSync(path.join(CORPUS, 'go/go-test.json'))).cases
    const c = cases.find((x) => x.name === 'TestAppliesDiscount')
    expect(c?.message?.split('\n')[0]).toBe('    cart_test.go:18: discount: got 90, want 91')
  })
})
