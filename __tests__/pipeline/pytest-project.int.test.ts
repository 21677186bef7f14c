// A Python project in the shape of a real one (fixtures/pytest-project): the install phase makes
// a virtualenv and installs the project into it (no lockfile: the virtualenv's distributions are
// the record), then the agent fixes a bug and runs pytest, which writes `.pytest_cache/` (its own
// `.gitignore` holds `*`, never honoured: the rules come from the base tree) and `__pycache__/`
// folders. The repository has no `.gitignore`: only the default tool-output list keeps them out.
// The diff holds the source change alone, the report and the review name what was left out, and
// the review shows the source file first.
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { ROOT } from '../support/cli.js'
import { imageId, leftovers, makeWorkspace, read, runAirlock } from '../support/run.js'

const FIXTURE = path.join(ROOT, 'fixtures', 'pytest-project', 'repo')
const PYTHON = 'airlock-local/python:3-pytest'

/** The fixture's files, by path. */
function fixtureFiles(dir = FIXTURE, prefix = ''): Record<string, string> {
  const files: Record<string, string> = {}
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix === '' ? e.name : `${prefix}/${e.name}`
    if (e.isDirectory()) Object.assign(files, fixtureFiles(path.join(dir, e.name), rel))
    else files[rel] = fs.readFileSync(path.join(dir, e.name), 'utf8')
  }
  return files
}

/** The image with Python and pytest, built from the local Debian base when missing. */
function pythonImage(): string {
  try {
    return imageId(PYTHON)
  } catch {
    execFileSync('bash', [path.join(ROOT, 'scripts', 'prepare-images.sh'), 'python'], {
      stdio: 'pipe'
    })
    return imageId(PYTHON)
  }
}

describe('a pytest project', () => {
  let ws: string | undefined
  afterEach(() => {
    if (ws) fs.rmSync(ws, { recursive: true, force: true })
  })

  test('installed into a virtualenv, the agent fixes the bug and runs pytest: the diff holds the source change only, the caches and the virtualenv are listed as left out, the resolved tree is recorded, the review shows the source first', async () => {
    const files = fixtureFiles()
    expect(Object.keys(files)).not.toContain('.gitignore')
    ws = makeWorkspace(files, `FROM ${pythonImage()}\n`)
    const run = await runAirlock(ws, {
      // As such a project installs for development, here without network (no index).
      'setup-command':
        'python3 -m venv --system-site-packages .venv && .venv/bin/pip install -q --no-index --no-build-isolation -e .',
      'agent-command':
        "sed -i 's/return a - b/return a + b/' src/calc/ops.py && .venv/bin/python -m pytest -q",
      'test-command': '.venv/bin/python -m pytest -q --junitxml=pytest-report.xml',
      'test-reports': 'pytest-report.xml',
      'compare-base': 'true',
      memory: '512m'
    })
    const agentLog = read(path.join(run.outputDir, 'logs/agent.log'))
    expect({
      outcome: run.report.outcome,
      reason: run.report.outcomeReason,
      agentLog
    }).toMatchObject({ outcome: 'success' })
    // The agent's own pytest run passed, and wrote its caches in the workspace.
    expect(agentLog).toMatch(/3 passed/)
    expect(run.report.diff.files.map((f) => f.path)).toEqual(['src/calc/ops.py'])
    const left = run.report.diff.ignored?.entries ?? []
    expect(left.map((e) => e.path).sort()).toEqual([
      '.pytest_cache/',
      '.venv/',
      'src/calc/__pycache__/',
      'tests/__pycache__/'
    ])
    for (const e of left) expect(e.rule).toMatch(/default/)
    expect(run.report.policy.protected).toEqual([])
    // No lockfile: what the install resolved is the record (the freeze listing of the virtualenv).
    expect(run.report.setup?.lockfiles).toEqual([])
    const trees = run.report.setup?.resolved?.trees ?? []
    expect(trees).toEqual([
      expect.objectContaining({
        kind: 'python',
        path: expect.stringMatching(/^\.venv\/lib\/python3\.\d+\/site-packages$/),
        sha256: expect.stringMatching(/^[a-f0-9]{64}$/),
        total: 3
      })
    ])
    expect(trees[0].packages).toEqual([
      'calc==0.1.0',
      expect.stringMatching(/^pip==\d/),
      expect.stringMatching(/^setuptools==\d/)
    ])
    // The tests ran on exactly the change: the baseline failed, the head passes, all counted.
    expect(run.report.tests.summary).toMatchObject({ total: 3, passed: 3, failed: 0 })
    expect(run.report.tests.baseline?.phase.exitCode).not.toBe(0)
    // The review: the source change first (and alone) in the diff, the caches named as left out.
    const comment = read(path.join(run.outputDir, 'comment.md'))
    const diffs = [...comment.matchAll(/^diff --git a\/(\S+)/gm)].map((m) => m[1])
    expect(diffs).toEqual(['src/calc/ops.py'])
    const leftOut = comment.split('\n').find((l) => l.includes('Left out')) ?? ''
    for (const p of [
      '.pytest\\_cache/',
      '.venv/',
      'src/calc/\\_\\_pycache\\_\\_/',
      'tests/\\_\\_pycache\\_\\_/'
    ])
      expect(leftOut).toContain(p)
    expect(comment).toMatch(
      /resolved: 3 python packages in <code>\.venv\/lib\/python3\.\d+\/site-packages<\/code> \(sha256 <code>[a-f0-9]{12}<\/code>\)/
    )
    expect(await leftovers(run.report.runId)).toBe(0)
  }, 240_000)
})
