import { XMLParser } from 'fast-xml-parser'
import { readInside } from './safe-read.js'

export type CaseStatus = 'passed' | 'failed' | 'skipped'

export interface TestCase {
  id: string
  name: string
  suite: string
  status: CaseStatus
  durationMs?: number
  message?: string
  /** Failed in the first run of the test command and passed when it was re-run once. */
  flaky?: boolean
}

export type ReportFormat = 'junit' | 'jest-json' | 'pytest-json' | 'go-test-json'

export interface TestReportSource {
  path: string
  format: ReportFormat | 'unknown'
  status: 'ok' | 'missing' | 'malformed' | 'refused'
  detail?: string
  truncated?: boolean
  /** How many test cases this file contributed. */
  cases?: number
}

export interface TestSummary {
  total: number
  passed: number
  failed: number
  skipped: number
  /** Tests that failed first and passed on the one re-run (counted as passed above). */
  flaky?: number
}

export interface TestResults {
  summary: TestSummary
  cases: TestCase[]
  sources: TestReportSource[]
}

export const MAX_REPORT_BYTES = 20 * 1024 * 1024
const MAX_MESSAGE = 2000
/** Where the workspace is inside the sandbox: stripped from file names in reports. */
const SANDBOX_ROOT = '/workspace/'

export function summarize(cases: TestCase[]): TestSummary {
  const s: TestSummary = { total: cases.length, passed: 0, failed: 0, skipped: 0 }
  let flaky = 0
  for (const c of cases) {
    s[c.status]++
    if (c.flaky === true) flaky++
  }
  if (flaky > 0) s.flaky = flaky
  return s
}

/** Reads each configured report from the result tree (safely) and normalizes it. */
export async function collectTestReports(root: string, paths: string[]): Promise<TestResults> {
  const cases: TestCase[] = []
  const sources: TestReportSource[] = []
  for (const p of paths) {
    const read = await readInside(root, p, MAX_REPORT_BYTES)
    if (!read.ok) {
      sources.push({
        path: p,
        format: 'unknown',
        status: read.reason === 'missing' ? 'missing' : 'refused',
        detail: read.detail
      })
      continue
    }
    const parsed = parseTestReport(read.data)
    cases.push(...parsed.cases)
    sources.push({
      path: p,
      format: parsed.format,
      status: parsed.error === undefined ? 'ok' : 'malformed',
      ...(parsed.error !== undefined ? { detail: parsed.error.slice(0, 300) } : {}),
      ...(parsed.detail !== undefined && parsed.error === undefined
        ? { detail: parsed.detail }
        : {}),
      ...(read.truncated ? { truncated: true } : {}),
      cases: parsed.cases.length
    })
  }
  return { summary: summarize(cases), cases, sources }
}

export interface ParsedReport {
  format: ReportFormat | 'unknown'
  cases: TestCase[]
  /** Set when the file could not be understood: why. Cases read before the error are kept. */
  error?: string
  /** A note on a report that was read (e.g. lines that were not understood). */
  detail?: string
}

/**
 * Recognizes the format from the content (never from the name the agent gave the file) and
 * normalizes it. Never throws: a file that is not a report is returned with `error` set.
 */
export function parseTestReport(data: Buffer): ParsedReport {
  const text = data.toString('utf8').replace(/^\ufeff/, '')
  const trimmed = text.trimStart()
  if (trimmed === '') return { format: 'unknown', cases: [], error: 'the file is empty' }
  let format: ReportFormat | 'unknown' = 'unknown'
  try {
    if (trimmed.startsWith('<')) {
      format = 'junit'
      return { format, cases: parseJUnit(text) }
    }
    if (/^\{\s*"(Time|Action)"/.test(trimmed)) return parseGoTestJson(text)
    if (trimmed.startsWith('{')) {
      const head = text.slice(0, 4096)
      if (/"testResults"/.test(head)) format = 'jest-json'
      else if (/"(nodeid|tests)"/.test(head)) format = 'pytest-json'
      let doc: unknown
      try {
        doc = JSON.parse(text)
      } catch (error) {
        return { format, cases: [], error: `not valid JSON: ${errorText(error)}` }
      }
      if (isNode(doc) && 'testResults' in doc) {
        format = 'jest-json'
        return { format, cases: parseJestJson(doc) }
      }
      if (isNode(doc) && Array.isArray(doc.tests) && 'summary' in doc) {
        format = 'pytest-json'
        return { format, cases: parsePytestJson(doc) }
      }
      return {
        format: 'unknown',
        cases: [],
        error: 'JSON, but not a Jest/Vitest (--json), pytest-json-report or go test -json report'
      }
    }
  } catch (error) {
    return { format, cases: [], error: errorText(error) }
  }
  return {
    format: 'unknown',
    cases: [],
    error:
      'not a recognized test report (JUnit XML, Jest/Vitest JSON, pytest-json-report, go test -json)'
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function isNode(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined
}

function relFile(file: string): string {
  return file.startsWith(SANDBOX_ROOT) ? file.slice(SANDBOX_ROOT.length) : file
}

function clip(message: string | undefined): { message?: string } {
  return message === undefined || message === '' ? {} : { message: message.slice(0, MAX_MESSAGE) }
}

const JEST_STATUS: Record<string, CaseStatus> = {
  passed: 'passed',
  failed: 'failed',
  pending: 'skipped',
  skipped: 'skipped',
  todo: 'skipped',
  disabled: 'skipped',
  focused: 'passed'
}

/** `jest --json` and `vitest --reporter=json` (the same shape). */
export function parseJestJson(doc: Node): TestCase[] {
  if (!Array.isArray(doc.testResults)) throw new Error('testResults is not an array')
  const cases: TestCase[] = []
  for (const file of doc.testResults as unknown[]) {
    if (!isNode(file)) throw new Error('an entry of testResults is not an object')
    const suite = relFile(str(file.name) ?? str(file.testFilePath) ?? '')
    const assertions = Array.isArray(file.assertionResults) ? file.assertionResults : []
    for (const a of assertions as unknown[]) {
      if (!isNode(a)) continue
      const titles = [
        ...(Array.isArray(a.ancestorTitles) ? a.ancestorTitles.map(String) : []),
        String(a.title ?? '')
      ]
      const status = JEST_STATUS[String(a.status)]
      if (status === undefined) throw new Error(`unknown test status "${String(a.status)}"`)
      const name = titles.join(' › ')
      const messages = Array.isArray(a.failureMessages) ? a.failureMessages.map(String) : []
      const duration = typeof a.duration === 'number' ? Math.round(a.duration) : undefined
      cases.push({
        id: `${suite}::${name}`,
        name,
        suite,
        status,
        ...(duration !== undefined ? { durationMs: duration } : {}),
        ...(status === 'failed' ? clip(messages.join('\n')) : {})
      })
    }
    // A file that failed to run (syntax error, missing import) has no assertions but a message.
    if (assertions.length === 0 && file.status === 'failed') {
      cases.push({
        id: `${suite}::(test file)`,
        name: '(test file)',
        suite,
        status: 'failed',
        ...clip(str(file.message) ?? str(file.failureMessage) ?? 'the test file failed to run')
      })
    }
  }
  return cases
}

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

/** `go test -json` (test2json): one JSON event per line; the last action of each test counts. */
export function parseGoTestJson(text: string): ParsedReport {
  interface GoTest {
    pkg: string
    test: string
    status?: CaseStatus
    elapsed?: number
    output: string
  }
  const tests = new Map<string, GoTest>()
  const failedPackages = new Set<string>()
  const packageOutput = new Map<string, string>()
  let events = 0
  let ignored = 0
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    let e: unknown
    try {
      e = JSON.parse(line)
    } catch {
      ignored++
      continue
    }
    if (!isNode(e) || typeof e.Action !== 'string') {
      ignored++
      continue
    }
    events++
    const pkg = str(e.Package) ?? ''
    const name = str(e.Test)
    if (name === undefined) {
      if (e.Action === 'fail') failedPackages.add(pkg)
      if (e.Action === 'output' && typeof e.Output === 'string')
        packageOutput.set(pkg, ((packageOutput.get(pkg) ?? '') + e.Output).slice(-MAX_MESSAGE))
      continue
    }
    const key = `${pkg}::${name}`
    const t = tests.get(key) ?? { pkg, test: name, output: '' }
    tests.set(key, t)
    if (e.Action === 'pass') t.status = 'passed'
    else if (e.Action === 'fail') t.status = 'failed'
    else if (e.Action === 'skip') t.status = 'skipped'
    else if (e.Action === 'output' && typeof e.Output === 'string' && t.output.length < MAX_MESSAGE)
      t.output += e.Output
    if (typeof e.Elapsed === 'number') t.elapsed = e.Elapsed
  }
  if (events === 0) {
    return { format: 'go-test-json', cases: [], error: 'no go test -json events in the file' }
  }
  const cases: TestCase[] = []
  const pkgsWithFailures = new Set<string>()
  for (const [key, t] of tests) {
    // A test that started and never ended: the binary panicked or was killed.
    const status = t.status ?? 'failed'
    if (status === 'failed') pkgsWithFailures.add(t.pkg)
    cases.push({
      id: key,
      name: t.test,
      suite: t.pkg,
      status,
      ...(t.elapsed !== undefined ? { durationMs: Math.round(t.elapsed * 1000) } : {}),
      ...(status === 'failed'
        ? clip(
            t.status === undefined ? `no result (the test binary stopped)\n${t.output}` : t.output
          )
        : {})
    })
  }
  // A package that failed without a failing test did not build, or failed outside any test.
  for (const pkg of failedPackages) {
    if (pkgsWithFailures.has(pkg)) continue
    cases.push({
      id: `${pkg}::(package)`,
      name: '(package)',
      suite: pkg,
      status: 'failed',
      ...clip(packageOutput.get(pkg) || 'the package failed outside its tests')
    })
  }
  return {
    format: 'go-test-json',
    cases,
    ...(ignored > 0
      ? { detail: `${ignored} line(s) were not go test -json events and were ignored` }
      : {})
  }
}

type Node = Record<string, unknown>

function asArray(v: unknown): Node[] {
  if (v === undefined || v === null) return []
  return (Array.isArray(v) ? v : [v]).filter((x): x is Node => typeof x === 'object' && x !== null)
}

function text(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined
  if (typeof v === 'string') return v
  if (typeof v === 'object') {
    const n = v as Node
    const msg = n['@_message'] ?? n['#text']
    return typeof msg === 'string' ? msg : undefined
  }
  return String(v)
}

/** JUnit XML from any producer: <testsuites>/<testsuite>/<testcase>, nested suites included. */
export function parseJUnit(xml: string): TestCase[] {
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    processEntities: true,
    htmlEntities: false,
    allowBooleanAttributes: true,
    parseTagValue: false,
    parseAttributeValue: false,
    isArray: (name) => ['testsuite', 'testcase', 'failure', 'error', 'skipped'].includes(name)
  })
  const doc = parser.parse(xml, true) as Node
  // <testsuites> may hold <testcase>s directly (node --test does): treat it as a nameless suite.
  const roots = [
    ...asArray(doc.testsuites).map((s) => ({ ...s, '@_name': '' })),
    ...asArray(doc.testsuite)
  ]
  if (doc.testsuites === undefined && doc.testsuite === undefined) {
    throw new Error('no <testsuites> or <testsuite> element')
  }
  const cases: TestCase[] = []
  const visit = (suite: Node, prefix: string): void => {
    const name = String(suite['@_name'] ?? '')
    const suiteName = prefix && name ? `${prefix} › ${name}` : prefix || name
    for (const tc of asArray(suite.testcase)) {
      const caseName = String(tc['@_name'] ?? '')
      const classname = String(tc['@_classname'] ?? suiteName)
      const failed = asArray(tc.failure).length > 0 || asArray(tc.error).length > 0
      const skipped = tc.skipped !== undefined
      const failure = [...asArray(tc.failure), ...asArray(tc.error)][0]
      const seconds = Number(tc['@_time'])
      cases.push({
        id: `${classname}::${caseName}`,
        name: caseName,
        suite: classname,
        status: failed ? 'failed' : skipped ? 'skipped' : 'passed',
        ...(Number.isFinite(seconds) ? { durationMs: Math.round(seconds * 1000) } : {}),
        ...(failed && failure ? { message: (text(failure) ?? '').slice(0, MAX_MESSAGE) } : {})
      })
    }
    for (const child of asArray(suite.testsuite)) visit(child, suiteName)
  }
  for (const root of roots) visit(root, '')
  return cases
}
