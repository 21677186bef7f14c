// Tests weakened: skipped or focused tests, assertions that cannot fail or check less, tests removed.
import { LOCKFILE, isTestPath } from './file-kinds.js'
import { cut } from './finding.js'
import type { LineRule, ThreatFinding } from './finding.js'
import type { PatchFile, PatchLine } from './patch.js'

export const TEST_LINE_RULES: LineRule[] = [
  {
    class: 'test-weakening',
    rule: 'test-skipped',
    severity: 'medium',
    re: /\b(it|test|describe|context|suite)\.(skip|todo)\s*\(|(?<![.\w])x(it|describe|test|context)\s*\(|@pytest\.mark\.(skip|skipif|xfail)\b|@unittest\.(skip|skipIf|skipUnless|expectedFailure)\b|\bpytest\.skip\s*\(|\bself\.skipTest\s*\(|\bt\.Skip(Now|f)?\s*\(|^\s*skip\s*(["']|$)/,
    why: 'skips a test',
    files: isTestPath
  },
  {
    class: 'test-weakening',
    rule: 'test-focused',
    severity: 'medium',
    re: /\b(it|test|describe|context)\.only\s*\(|(?<![.\w])f(it|describe)\s*\(/,
    why: 'focuses one test, so the others stop running',
    files: isTestPath
  },
  {
    class: 'test-weakening',
    rule: 'trivial-assertion',
    severity: 'medium',
    re: /expect\(\s*(true|1|false)\s*\)\.(toBe|toEqual)\(\s*\1\s*\)|\bassert\s+True\s*$|\bassert\s+1\s*$|assert\.(ok|isTrue)\(\s*true\s*\)/,
    why: 'an assertion that cannot fail',
    files: isTestPath
  },
  {
    class: 'test-weakening',
    rule: 'tests-disabled',
    severity: 'medium',
    re: /\b(jest|vitest|mocha|pytest|go\s+test|npm\s+(run\s+)?test|tox|cargo\s+test|make\s+test)\b[^\n]*\|\|\s*(true|exit\s+0|:)\s*["']?\s*,?$|--passWithNoTests\b|\btestPathIgnorePatterns\b|--exitzero\b|\bcollect_ignore\b|--deselect\b|continue-on-error:\s*true/,
    why: 'lets the tests pass whatever they find, or stops some from running',
    files: (p) => !LOCKFILE.test(p)
  }
]

const ASSERTION =
  /\b(expect|assert\w*|should)\s*[.(]|\bt\.(Error|Errorf|Fatal|Fatalf|Fail)\b|\b(require|assert)\.\w+\(|\bself\.assert\w+\(|^\s*assert\s|\bdeepEqual\(|\bstrictEqual\(/

export function testChanges(f: PatchFile, out: ThreatFinding[]): void {
  if (!isTestPath(f.path)) return
  if (f.status === 'deleted') {
    out.push({
      path: f.path,
      line: null,
      side: 'LEFT',
      class: 'test-weakening',
      rule: 'test-deleted',
      severity: 'medium',
      why: `a test file is deleted (${f.removed.filter((l) => ASSERTION.test(l.text)).length} assertion line(s) gone)`
    })
    return
  }
  const removed = f.removed.filter((l) => ASSERTION.test(l.text))
  const added = f.added.filter((l) => ASSERTION.test(l.text))
  if (removed.length > added.length) {
    out.push({
      path: f.path,
      line: removed[0].line,
      side: 'LEFT',
      class: 'test-weakening',
      rule: 'assertions-removed',
      severity: 'medium',
      why: `${removed.length - added.length} fewer assertion line(s) than before (${removed.length} removed, ${added.length} added)`,
      match: cut(removed[0].text.trim())
    })
  } else if (removed.length > 0) {
    // As many assertions, but weaker ones: `== 5` become `is not None`.
    const weak = (ls: PatchLine[]): PatchLine[] => ls.filter((l) => WEAK_ASSERTION.test(l.text))
    const weaker = weak(added)
    if (weaker.length > weak(removed).length)
      out.push({
        path: f.path,
        line: weaker[0].line,
        side: 'RIGHT',
        class: 'test-weakening',
        rule: 'assertion-weakened',
        severity: 'medium',
        why: 'an assertion is replaced by one that checks less (defined, truthy, not None)',
        match: cut(weaker[0].text.trim())
      })
  }
  // Fewer tests declared than before: removed, or renamed so the runner no longer finds them.
  const gone = f.removed.filter((l) => TEST_DECLARATION.test(l.text)).length
  const come = f.added.filter((l) => TEST_DECLARATION.test(l.text)).length
  if (gone > come) {
    const first = f.removed.find((l) => TEST_DECLARATION.test(l.text)) as PatchLine
    out.push({
      path: f.path,
      line: first.line,
      side: 'LEFT',
      class: 'test-weakening',
      rule: 'tests-removed',
      severity: 'medium',
      why: `${gone - come} fewer test(s) declared than before (removed, or renamed so the runner no longer finds them)`,
      match: cut(first.text.trim())
    })
  }
}

const WEAK_ASSERTION =
  /\bis\s+not\s+None\b|\.(toBeDefined|toBeTruthy|toBeFalsy|not\.toBeUndefined|not\.toBeNull)\(\)|\bassert\.ok\(|\bassert\s+\w+\s*$|\bassertIsNotNone\(|\bassertTrue\(\s*\w+\s*\)|\brequire\.NotNil\(|\bassert\.NotNil\(|!=\s*nil\s*\{?\s*$/
const TEST_DECLARATION =
  /^\s*(it|test|specify)\s*\(\s*["'`]|^\s*def\s+test_?\w*\s*\(|^\s*func\s+Test\w*\s*\(\s*\w+\s+\*testing\.T\)|^\s*@test\s+["']/
