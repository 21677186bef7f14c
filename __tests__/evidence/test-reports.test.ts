import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import {
  collectTestReports,
  parseTestReport,
  summarize
} from '../../src/evidence/test-reports/index.js'
import type { CaseStatus } from '../../src/evidence/test-reports/index.js'

const FIXTURES = path.join(process.cwd(), 'fixtures', 'reports')
const read = (name: string): Buffer => fs.readFileSync(path.join(FIXTURES, name))

describe('test reports from real runners', () => {
  test.each([
    // file, format, [passed, failed, skipped], one case that must be there
    [
      'jest.json',
      'jest-json',
      [2, 1, 1],
      { id: '/tmp/cart-jest/cart.test.js::cart › applies discount', status: 'failed' }
    ],
    [
      'vitest.json',
      'jest-json',
      [2, 1, 1],
      { id: '/tmp/cart-suite/cart.test.js::cart › totals › sums prices', status: 'passed' }
    ],
    [
      'vitest-junit.xml',
      'junit',
      [2, 1, 1],
      { id: 'cart.test.js::cart > ships abroad', status: 'skipped' }
    ],
    ['node-junit.xml', 'junit', [1, 1, 1], { name: 'applies discount', status: 'failed' }],
    [
      'go-test.json',
      'go-test-json',
      [2, 3, 1],
      { id: 'example.com/cart::TestTotals/empty_cart', status: 'failed' }
    ],
    [
      'pytest-report.json',
      'pytest-json',
      [2, 2, 2],
      { id: 'tests/test_cart.py::TestTotals::test_sums_prices[1-2]', status: 'passed' }
    ]
  ] as const)('%s is read as %s', (file, format, [passed, failed, skipped], expected) => {
    const parsed = parseTestReport(read(file))
    expect(parsed.error).toBeUndefined()
    expect(parsed.format).toBe(format)
    const s = summarize(parsed.cases)
    expect([s.passed, s.failed, s.skipped]).toEqual([passed, failed, skipped])
    expect(parsed.cases).toEqual(expect.arrayContaining([expect.objectContaining(expected)]))
    for (const c of parsed.cases) {
      expect(c.id).not.toBe('')
      if (c.status === 'failed') expect(c.message ?? '').not.toBe('')
    }
  })

  test('failure messages are kept, capped', () => {
    const go = parseTestReport(read('go-test.json')).cases
    const discount = go.find((c) => c.name === 'TestAppliesDiscount')
    expect(discount?.message).toContain('discount: got 90, want 91')
    const py = parseTestReport(read('pytest-report.json')).cases
    expect(py.find((c) => c.name === 'test_with_db')?.message).toBe('RuntimeError: no database')
    for (const c of [...go, ...py]) expect((c.message ?? '').length).toBeLessThanOrEqual(2000)
  })
})

describe('every element shape the JUnit schema allows', () => {
  const one = (inner: string, name = 't'): ReturnType<typeof parseTestReport>['cases'][number] => {
    const xml = `<?xml version="1.0"?><testsuites><testsuite name="s"><testcase classname="c" name="${name}">${inner}</testcase></testsuite></testsuites>`
    const parsed = parseTestReport(Buffer.from(xml))
    expect(parsed.error).toBeUndefined()
    expect(parsed.cases).toHaveLength(1)
    return parsed.cases[0]
  }
  test.each([
    // inner XML of <testcase>, status, message
    ['', 'passed', undefined],
    ['<failure/>', 'failed', 'failed'],
    ['<failure></failure>', 'failed', 'failed'],
    ['<failure message="expected 1 to be 2"/>', 'failed', 'expected 1 to be 2'],
    ['<failure type="AssertionError"/>', 'failed', 'AssertionError'],
    [
      '<failure>Expected values to be strictly equal</failure>',
      'failed',
      'Expected values to be strictly equal'
    ],
    ['<failure><![CDATA[at <anonymous> & more]]></failure>', 'failed', 'at <anonymous> & more'],
    [
      '<failure message="boom" type="Error">Error: boom\n    at f (a.js:1:1)</failure>',
      'failed',
      'Error: boom\n    at f (a.js:1:1)'
    ],
    [
      '<failure message="assert 1 == 2">def test_x():\n&gt;   assert 1 == 2</failure>',
      'failed',
      'assert 1 == 2\ndef test_x():\n>   assert 1 == 2'
    ],
    ['<error/>', 'failed', 'failed'],
    ['<error message="no database"/>', 'failed', 'no database'],
    ['<error>RuntimeError: no database</error>', 'failed', 'RuntimeError: no database'],
    ['<failure>first</failure><failure>second</failure>', 'failed', 'first'],
    ['<skipped/>', 'skipped', undefined],
    ['<skipped message="not yet"/>', 'skipped', undefined],
    ['<skipped>not yet</skipped>', 'skipped', undefined],
    ['<skipped/><failure>both</failure>', 'failed', 'both'],
    ['<system-out>printed</system-out>', 'passed', undefined],
    ['<system-err>warned</system-err><system-out/>', 'passed', undefined],
    ['<failure>broke</failure><system-out>printed</system-out>', 'failed', 'broke'],
    ['<properties><property name="p" value="v"/></properties>', 'passed', undefined]
  ])('%s → %s', (inner, status, message) => {
    const c = one(inner)
    expect(c.status).toBe(status)
    expect(c.message).toBe(message)
  })

  test('suite-level <system-out>, <properties> and an empty suite count nothing', () => {
    const xml =
      '<testsuites><testsuite name="a"><properties/><system-out>x</system-out></testsuite>' +
      '<testsuite name="b" tests="1"><testcase name="t"/><system-err>y</system-err></testsuite></testsuites>'
    expect(summarize(parseTestReport(Buffer.from(xml)).cases)).toEqual({
      total: 1,
      passed: 1,
      failed: 0,
      skipped: 0
    })
  })

  test('a single <testsuite> root, and <testcase>s directly under <testsuites>', () => {
    const single = parseTestReport(
      Buffer.from('<testsuite name="s"><testcase name="t"><error/></testcase></testsuite>')
    )
    expect(single.cases).toEqual([expect.objectContaining({ id: 's::t', status: 'failed' })])
    const direct = parseTestReport(Buffer.from('<testsuites><testcase name="t"/></testsuites>'))
    expect(direct.cases).toEqual([expect.objectContaining({ id: '::t', status: 'passed' })])
  })

  test('numeric character references and entities are decoded once', () => {
    const c = one('<failure>a &#x27;b&#x27; &amp;#x41;</failure>', 'g&#xE8;re &#x2713;')
    expect(c.name).toBe('gère ✓')
    expect(c.message).toBe("a 'b' &#x41;")
  })

  test('a failure message is capped', () => {
    const c = one(`<failure>${'x'.repeat(10_000)}</failure>`)
    expect(c.message).toHaveLength(2000)
  })
})

describe('malformed reports are recorded, never thrown', () => {
  test.each([
    ['jest-truncated.json', 'jest-json', /not valid JSON/],
    ['jest-wrong-shape.json', 'jest-json', /testResults is not an array/],
    ['junit-no-suites.xml', 'junit', /no <testsuites> or <testsuite>/],
    ['junit-unclosed.xml', 'junit', /./],
    ['pytest-no-nodeid.json', 'pytest-json', /no nodeid/],
    ['empty.xml', 'unknown', /empty/],
    ['binary.bin', 'unknown', /not a recognized test report/]
  ])('%s', (file, format, error) => {
    const parsed = parseTestReport(read(path.join('malformed', file)))
    expect(parsed.format).toBe(format)
    expect(parsed.error).toMatch(error)
    expect(parsed.cases).toEqual([])
  })

  test('go test -json with lines that are not events keeps the events and says so', () => {
    const parsed = parseTestReport(read('malformed/go-test-garbage.json'))
    expect(parsed.error).toBeUndefined()
    expect(parsed.detail).toMatch(/2 line\(s\) were not go test -json events/)
    expect(parsed.cases.map((c) => [c.name, c.status])).toEqual([['TestAddsItems', 'passed']])
  })

  test('a go test that started and never ended is a failure', () => {
    const text = [
      '{"Action":"run","Package":"p","Test":"TestHang"}',
      '{"Action":"output","Package":"p","Test":"TestHang","Output":"panic: boom\\n"}',
      '{"Action":"fail","Package":"p","Elapsed":0.1}'
    ].join('\n')
    const cases = parseTestReport(Buffer.from(text)).cases
    expect(cases).toEqual([
      expect.objectContaining({
        id: 'p::TestHang',
        status: 'failed',
        message: expect.stringContaining('panic: boom')
      })
    ])
  })

  test('a go package that does not build is one failed case', () => {
    const text = [
      '{"Action":"output","Package":"p","Output":"# p\\n./a.go:3:1: syntax error\\n"}',
      '{"Action":"output","Package":"p","Output":"FAIL\\tp [build failed]\\n"}',
      '{"Action":"fail","Package":"p","Elapsed":0}'
    ].join('\n')
    const cases = parseTestReport(Buffer.from(text)).cases
    expect(cases).toEqual([
      expect.objectContaining({
        id: 'p::(package)',
        status: 'failed',
        message: expect.stringContaining('syntax error')
      })
    ])
  })

  test('a jest file that failed to run is one failed case', () => {
    const doc = {
      testResults: [
        {
          name: '/workspace/a.test.js',
          status: 'failed',
          message: 'SyntaxError',
          assertionResults: []
        }
      ]
    }
    expect(parseTestReport(Buffer.from(JSON.stringify(doc))).cases).toEqual([
      {
        id: 'a.test.js::(test file)',
        name: '(test file)',
        suite: 'a.test.js',
        status: 'failed',
        message: 'SyntaxError'
      }
    ])
  })
})

describe('collectTestReports reads from the result tree safely', () => {
  let root: string
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-reports-'))
  })
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

  test('formats mix; missing, symlinked, FIFO and malformed files are recorded', async () => {
    fs.copyFileSync(path.join(FIXTURES, 'go-test.json'), path.join(root, 'go.json'))
    fs.copyFileSync(path.join(FIXTURES, 'jest.json'), path.join(root, 'jest.json'))
    fs.copyFileSync(
      path.join(FIXTURES, 'malformed', 'junit-unclosed.xml'),
      path.join(root, 'bad.xml')
    )
    fs.symlinkSync('/etc/passwd', path.join(root, 'junit.xml'))
    const { execFileSync } = await import('node:child_process')
    execFileSync('mkfifo', [path.join(root, 'fifo.xml')])
    const results = await collectTestReports(root, [
      'go.json',
      'jest.json',
      'bad.xml',
      'junit.xml',
      'fifo.xml',
      'absent.xml'
    ])
    expect(results.sources.map((s) => [s.path, s.format, s.status])).toEqual([
      ['go.json', 'go-test-json', 'ok'],
      ['jest.json', 'jest-json', 'ok'],
      ['bad.xml', 'junit', 'malformed'],
      ['junit.xml', 'unknown', 'refused'],
      ['fifo.xml', 'unknown', 'refused'],
      ['absent.xml', 'unknown', 'missing']
    ])
    const statuses: CaseStatus[] = results.cases.map((c) => c.status)
    expect(statuses.length).toBe(results.summary.total)
    expect(results.summary).toEqual({ total: 10, passed: 4, failed: 4, skipped: 2 })
    expect(JSON.stringify(results)).not.toContain('root:')
  })
})

describe('the report files read are kept as evidence', () => {
  let root: string
  let out: string
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-reports-'))
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-out-'))
  })
  afterEach(() => {
    fs.rmSync(root, { recursive: true, force: true })
    fs.rmSync(out, { recursive: true, force: true })
  })

  test('copied under test-reports/ by their configured path, capped, secrets masked', async () => {
    fs.mkdirSync(path.join(root, 'reports'))
    const xunit = fs.readFileSync(path.join(FIXTURES, 'corpus', 'mocha', 'xunit.xml'), 'utf8')
    fs.writeFileSync(
      path.join(root, 'reports', 'xunit.xml'),
      xunit.replace('cannot read the input', 'token s3cr3t-value-123 leaked')
    )
    fs.copyFileSync(path.join(FIXTURES, 'go-test.json'), path.join(root, 'go.json'))
    fs.symlinkSync('/etc/passwd', path.join(root, 'junit.xml'))
    const results = await collectTestReports(
      root,
      ['reports/xunit.xml', 'go.json', 'junit.xml', 'absent.xml'],
      { outDir: out, maxBytes: 3000, secretValues: ['s3cr3t-value-123'] }
    )
    expect(results.sources.map((s) => s.kept)).toEqual([
      { path: 'test-reports/reports/xunit.xml', bytes: expect.any(Number) as number },
      { path: 'test-reports/go.json', bytes: 3000, truncated: true },
      undefined,
      undefined
    ])
    const kept = fs.readFileSync(path.join(out, 'test-reports', 'reports', 'xunit.xml'), 'utf8')
    expect(kept).toContain('token *** leaked')
    expect(kept).not.toContain('s3cr3t')
    expect(kept.length).toBe(results.sources[0].kept?.bytes)
    // The counts come from the file as read, not from the capped copy.
    expect(results.sources[1].cases).toBe(6)
    expect(fs.readdirSync(path.join(out, 'test-reports')).sort()).toEqual(['go.json', 'reports'])
  })

  test('without keep, nothing is written', async () => {
    fs.copyFileSync(path.join(FIXTURES, 'go-test.json'), path.join(root, 'go.json'))
    const results = await collectTestReports(root, ['go.json'])
    expect(results.sources[0].kept).toBeUndefined()
    expect(fs.readdirSync(out)).toEqual([])
  })
})
