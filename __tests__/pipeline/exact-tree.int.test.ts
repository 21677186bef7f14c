// The tests run on exactly what would be applied: a fresh checkout of the diff's result tree plus
// what the install phase left outside the tree. What the agent leaves in ignored places of its own
// workspace (a patched dependency under node_modules/, a tool cache) never reaches them.
import * as fs from 'node:fs'
import * as path from 'node:path'
import { leftovers, makeWorkspace, read, runAirlock } from '../support/run.js'

describe('the tests see exactly the proposed change', () => {
  let ws: string
  afterEach(() => fs.rmSync(ws, { recursive: true, force: true }))

  it('an agent that patches a file under node_modules/ to make the tests pass: the tests never see that file', async () => {
    ws = makeWorkspace({
      '.gitignore': 'node_modules/\n',
      'src/app.txt': 'v1\n',
      'test.sh': 'grep -q good node_modules/dep/value && grep -q v2 src/app.txt\n'
    })
    const run = await runAirlock(ws, {
      // The install leaves a dependency the tests cannot pass with.
      'setup-command': 'mkdir -p node_modules/dep && echo bad > node_modules/dep/value',
      // The agent changes the source and, outside the diff, the installed dependency.
      'agent-command': 'echo v2 > src/app.txt; echo good > node_modules/dep/value',
      'test-command': 'sh test.sh'
    })
    expect(run.report.diff.files.map((f) => f.path)).toEqual(['src/app.txt'])
    expect(run.report.diff.ignored?.entries).toEqual([
      { path: 'node_modules/', rule: 'node_modules/ (.gitignore)' }
    ])
    expect(run.report.outcome).toBe('tests-failed')
    // Both runs of the command saw the install's file, not the agent's.
    expect(run.report.tests.rerun?.phase.exitCode).not.toBe(0)
    expect(run.report.tests.workspace).toEqual({
      tree: run.report.diff.resultTree,
      installOutput: 1
    })
    expect(await leftovers(run.report.runId)).toBe(0)
  }, 180_000)

  it('without an install phase, nothing the agent left outside the diff is there', async () => {
    ws = makeWorkspace({ 'src/app.txt': 'v1\n' })
    const run = await runAirlock(ws, {
      'agent-command':
        'echo v2 > src/app.txt; mkdir -p .venv node_modules/x; echo 1 > .venv/patched; echo 1 > node_modules/x/i.js',
      'test-command': 'test ! -e .venv && test ! -e node_modules && grep -q v2 src/app.txt'
    })
    expect(run.report.diff.files.map((f) => f.path)).toEqual(['src/app.txt'])
    expect(run.report.outcome).toBe('success')
    expect(run.report.tests.workspace).toEqual({
      tree: run.report.diff.resultTree,
      installOutput: 0
    })
    expect(read(path.join(run.outputDir, 'comment.md'))).toMatch(/Left out/)
  }, 180_000)
})
