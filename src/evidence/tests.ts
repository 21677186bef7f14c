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
}

export interface TestReportSource {
  path: string
  format: 'junit' | 'unknown'
  status: 'ok' | 'missing' | 'malformed' | 'refused'
  detail?: string
  truncated?: boolean
}

export interface TestSummary {
  total: number
  passed: number
  failed: number
  skipped: number
}

export interface TestResults {
  summary: TestSummary
  cases: TestCase[]
  sources: TestReportSource[]
}

export const MAX_REPORT_BYTES = 20 * 1024 * 1024
const MAX_MESSAGE = 2000

export function summarize(cases: TestCase[]): TestSummary {
  const s = { total: cases.length, passed: 0, failed: 0, skipped: 0 }
  for (const c of cases) s[c.status]++
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
    try {
      const parsed = parseJUnit(read.data.toString('utf8'))
      cases.push(...parsed)
      sources.push({ path: p, format: 'junit', status: 'ok', truncated: read.truncated })
    } catch (error) {
      sources.push({
        path: p,
        format: 'junit',
        status: 'malformed',
        detail: (error as Error).message.slice(0, 300)
      })
    }
  }
  return { summary: summarize(cases), cases, sources }
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
