// A JavaScript project tested with mocha (fixtures/mocha-project), whose test script writes a JUnit
// report with mocha's own `xunit` reporter: a `<failure>` with text and no attributes, which was
// once counted as passed. One of its 48 tests fails. The run counts 47 passed / 1 failed as mocha
// does, the review names the failing test with the first line of its failure, and the report file
// is kept in the evidence and bound in provenance.json. mocha itself is copied into the
// repository's node_modules (test-tools/mocha): the test phase has no network.
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { verifyProvenance } from '../../src/report/provenance-verify.js'
import { ROOT } from '../support/cli.js'
import { imageId, leftovers, makeWorkspace, read, runAirlock } from '../support/run.js'

const FIXTURE = path.join(ROOT, 'fixtures', 'mocha-project', 'repo')
const MOCHA = path.join(ROOT, 'test-tools', 'mocha', 'node_modules')
const NODE = 'airlock-local/node:18'

/** The files of a folder, by path (as text: mocha's files are all text). */
function filesOf(dir: string, prefix = ''): Record<string, string> {
  const files: Record<string, string> = {}
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix === '' ? e.name : `${prefix}/${e.name}`
    if (e.isDirectory()) Object.assign(files, filesOf(path.join(dir, e.name), rel))
    else if (e.isFile()) files[rel] = fs.readFileSync(path.join(dir, e.name), 'utf8')
  }
  return files
}

/** The image with Debian's Node.js, built from the local Debian base when missing. */
function nodeImage(): string {
  try {
    return imageId(NODE)
  } catch {
    execFileSync('bash', [path.join(ROOT, 'scripts', 'prepare-images.sh'), 'node'], {
      stdio: 'pipe'
    })
    return imageId(NODE)
  }
}

describe('a mocha project with the xunit reporter', () => {
  let ws: string | undefined
  afterEach(() => {
    if (ws) fs.rmSync(ws, { recursive: true, force: true })
  })

  test('one failing test: 47 passed / 1 failed, the review names it with its failure, the report file is kept and bound', async () => {
    expect(fs.existsSync(path.join(MOCHA, 'mocha'))).toBe(true)
    const files = { ...filesOf(FIXTURE), ...filesOf(MOCHA, 'node_modules') }
    ws = makeWorkspace(files, `FROM ${nodeImage()}\n`)
    const run = await runAirlock(ws, {
      'agent-command': 'echo "## Types" >> README.md',
      'test-command':
        'node node_modules/mocha/bin/mocha.js --reporter xunit --reporter-option output=test-results.xml',
      'test-reports': 'test-results.xml',
      memory: '512m'
    })
    const out = run.outputDir
    expect(run.report.outcome).toBe('tests-failed')
    // mocha's own count: "47 passing, 1 failing".
    expect(run.report.tests.summary).toMatchObject({ total: 48, passed: 47, failed: 1, skipped: 0 })
    const failed = run.report.tests.cases.filter((c) => c.status === 'failed')
    expect(failed).toEqual([
      expect.objectContaining({
        id: 'typeOf::should return type for unknown types',
        message: expect.stringMatching(/^Expected values to be strictly equal:/)
      })
    ])
    expect(run.report.outcomeReason).toBe('the tests failed (exit 1, 1 failed)')
    // The review names the failing test and the first lines of its failure.
    const comment = read(path.join(out, 'comment.md'))
    expect(comment).toContain(
      '### ❌ Failing tests (1)\n- <code>typeOf::should return type for unknown types</code>\n\n  ```\n  Expected values to be strictly equal:\n'
    )
    // The report file is in the evidence, bound in provenance.json like every evidence file.
    expect(run.report.tests.sources).toEqual([
      expect.objectContaining({
        path: 'test-results.xml',
        format: 'junit',
        status: 'ok',
        cases: 48,
        kept: { path: 'test-reports/test-results.xml', bytes: expect.any(Number) as number }
      })
    ])
    const kept = read(path.join(out, 'test-reports', 'test-results.xml'))
    expect(kept).toContain('<failure>Expected values to be strictly equal:')
    const statement = JSON.parse(read(path.join(out, 'provenance.json'))) as {
      predicate: { files: { path: string }[] }
    }
    expect(statement.predicate.files.map((f) => f.path)).toContain('test-reports/test-results.xml')
    expect(verifyProvenance(out).ok).toBe(true)
    fs.appendFileSync(path.join(out, 'test-reports', 'test-results.xml'), '<!-- edited -->')
    expect(verifyProvenance(out).ok).toBe(false)
    expect(await leftovers(run.report.runId)).toBe(0)
  }, 240_000)
})
