import { XMLParser } from 'fast-xml-parser'
import type { CaseStatus, Node, TestCase } from './model.js'
import { clip } from './model.js'

/**
 * An element's occurrences. With `isArray` set for it the parser gives an array whose items are a
 * string (`<failure>text</failure>`, `<skipped/>` as '') or an object (attributes, and `#text`).
 */
function occurrences(v: unknown): unknown[] {
  if (v === undefined || v === null) return []
  return Array.isArray(v) ? v : [v]
}

function nodes(v: unknown): Node[] {
  return occurrences(v).filter((x): x is Node => typeof x === 'object' && x !== null)
}

function attr(n: unknown, name: string): string | undefined {
  if (typeof n !== 'object' || n === null) return undefined
  const v = (n as Node)[`@_${name}`]
  return typeof v === 'string' ? v : undefined
}

/** The text inside an element (its body), whichever form the parser gave it. */
function body(v: unknown): string {
  if (typeof v === 'string') return v
  if (typeof v === 'object' && v !== null) {
    const t = (v as Node)['#text']
    if (typeof t === 'string') return t
  }
  return ''
}

/**
 * What a `<failure>` or `<error>` says, first lines first: its `message` attribute, then its body
 * (the stack or the report), or only the body when it already starts by saying the message
 * (Vitest, node:test, mocha-junit-reporter repeat it in the first line of the stack).
 */
export function failureText(element: unknown): string {
  const message = (attr(element, 'message') ?? '').trim()
  const text = body(element)
    .replace(/^\s*\n/, '')
    .trimEnd()
  const type = attr(element, 'type')
  if (message === '') return text === '' && type !== undefined ? type : text
  if (text === '') return message
  const firstLine = message.split('\n')[0]?.trim() ?? ''
  const opening = text.trimStart().split('\n')[0] ?? ''
  return firstLine !== '' && opening.includes(firstLine) ? text.trimStart() : `${message}\n${text}`
}

/**
 * pytest's JUnit report (`<testsuite name="pytest">`): the case's node id, as pytest prints it.
 * pytest writes `classname` as the node id's path with `/` → `.` and `.py` dropped, followed by the
 * classes; the `file` attribute (junit_family=xunit1) gives the path. Without it, the module is the
 * last part named like pytest's default test files (`test_*`, `*_test`); a classname that fits
 * neither is kept as it is.
 */
function pytestNodeId(classname: string, name: string, file: string | undefined): string | null {
  const parts = classname.split('.')
  let moduleParts: number
  let path: string
  if (file !== undefined && file.endsWith('.py')) {
    const dotted = file.slice(0, -3).replace(/\//g, '.')
    if (classname !== dotted && !classname.startsWith(`${dotted}.`)) return null
    moduleParts = dotted.split('.').length
    path = file
  } else {
    let last = -1
    parts.forEach((p, i) => {
      if (/^test_|_test$|^test$/.test(p)) last = i
    })
    if (last < 0) return null
    moduleParts = last + 1
    path = `${parts.slice(0, moduleParts).join('/')}.py`
  }
  return [path, ...parts.slice(moduleParts), name].join('::')
}

/** Node 20's junit reporter writes this classname on every case; the suites hold the path. */
const NODE20_CLASSNAME = 'test'

/**
 * JUnit XML from any producer: `<testsuites>`/`<testsuite>`/`<testcase>`, nested suites included.
 * Every shape the schema allows counts: `<failure/>`, `<failure message=…/>`,
 * `<failure>text</failure>`, the same for `<error>`, `<skipped/>` (with or without a message),
 * `<system-out>`/`<system-err>` (ignored).
 */
export function parseJUnit(xml: string): TestCase[] {
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    processEntities: true,
    // XML's numeric character references (&#xE8; &#x2713;), which mocha's xunit reporter writes
    // for every non-ASCII character; the parser decodes them (single pass) only with this set.
    htmlEntities: true,
    allowBooleanAttributes: true,
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
    isArray: (name) => ['testsuite', 'testcase', 'failure', 'error', 'skipped'].includes(name)
  })
  const doc = parser.parse(xml, true) as Node
  if (doc.testsuites === undefined && doc.testsuite === undefined) {
    throw new Error('no <testsuites> or <testsuite> element')
  }
  const pytest = [...nodes(doc.testsuites), ...nodes(doc.testsuite)].some(
    (s) =>
      attr(s, 'name') === 'pytest' || nodes(s.testsuite).some((c) => attr(c, 'name') === 'pytest')
  )
  const cases: TestCase[] = []
  const visit = (suite: Node, chain: string[]): void => {
    for (const tc of nodes(suite.testcase)) {
      const name = attr(tc, 'name') ?? ''
      const classname = attr(tc, 'classname')?.trim()
      const problems = [...occurrences(tc.failure), ...occurrences(tc.error)]
      const status: CaseStatus =
        problems.length > 0 ? 'failed' : tc.skipped !== undefined ? 'skipped' : 'passed'
      // The enclosing suites name the case's suite when the classname does not: it is absent,
      // Node 20's constant, or a part of the name (jest-junit and mocha-junit-reporter put the
      // full title in the name, and the same or the last title in the classname).
      const fromChain = chain.join(' › ')
      const suiteName =
        classname === undefined ||
        classname === '' ||
        classname === name ||
        name.endsWith(` ${classname}`) ||
        (classname === NODE20_CLASSNAME && fromChain !== '')
          ? fromChain
          : classname
      const id =
        (pytest && classname ? pytestNodeId(classname, name, attr(tc, 'file')) : null) ??
        `${suiteName}::${name}`
      const seconds = Number(attr(tc, 'time'))
      cases.push({
        id,
        name,
        suite: suiteName,
        status,
        ...(Number.isFinite(seconds) ? { durationMs: Math.round(seconds * 1000) } : {}),
        ...(status === 'failed' ? clip(failureText(problems[0]) || 'failed') : {})
      })
    }
    for (const child of nodes(suite.testsuite)) {
      const name = attr(child, 'name') ?? ''
      visit(child, name === '' ? chain : [...chain, name])
    }
  }
  // <testsuites> may hold <testcase>s directly (node --test does): a nameless suite.
  for (const root of nodes(doc.testsuites)) visit(root, [])
  for (const root of nodes(doc.testsuite)) {
    const name = attr(root, 'name') ?? ''
    visit(root, name === '' ? [] : [name])
  }
  return cases
}
