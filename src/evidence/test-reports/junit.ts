import { XMLParser } from 'fast-xml-parser'
import type { Node, TestCase } from './model.js'
import { MAX_MESSAGE } from './model.js'

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
