import type { CaseStatus, ParsedReport, TestCase } from './model.js'
import { MAX_MESSAGE, clip, isNode, str } from './model.js'

/** go test's own framing lines (which test runs, pauses, continues, ends): not the failure. */
const GO_FRAMING = /^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|FAIL|SKIP):)/

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
    else if (
      e.Action === 'output' &&
      typeof e.Output === 'string' &&
      t.output.length < MAX_MESSAGE &&
      !GO_FRAMING.test(e.Output)
    )
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
            t.status === undefined
              ? `no result (the test binary stopped)\n${t.output}`
              : t.output.trim() === ''
                ? 'failed with no output of its own (a subtest failed, or it called t.Fail)'
                : t.output
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
