import type { CaseStatus, Node, TestCase } from './model.js'
import { clip, isNode, relFile, str } from './model.js'

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
