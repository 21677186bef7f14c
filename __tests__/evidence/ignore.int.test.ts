// Build output in a real run: what the agent writes into paths the base tree ignores stays out of
// the diff, an agent's own .gitignore edit hides nothing, and neither the tests nor their re-run
// see what the agent left outside the tree.
import * as fs from 'node:fs'
import { makeWorkspace, runAirlock } from '../support/run.js'

describe('a diff that ignores build output', () => {
  test('node_modules and __pycache__ stay out; the .gitignore edit is in the diff and flagged', async () => {
    const ws = makeWorkspace({
      '.gitignore': 'node_modules/\n__pycache__/\n*.pyc\nlinked\n',
      'src/app.js': 'old\n'
    })
    const run = await runAirlock(ws, {
      'agent-command': [
        'mkdir -p node_modules/left-pad __pycache__',
        'echo "module.exports = 1" > node_modules/left-pad/index.js',
        'echo pyc > __pycache__/m.pyc',
        'ln -s /etc linked',
        // Tries to hide a file by editing the rules.
        'echo hidden.txt >> .gitignore',
        'echo secret > hidden.txt',
        'echo new > src/app.js'
      ].join(' && '),
      // The tests run on the result tree alone: the agent's build output is not there (exit 3 if
      // it were). They fail once and pass on the one re-run (AIRLOCK_RERUN), on another fresh copy.
      'test-command':
        'if [ -e node_modules/left-pad/index.js ] || [ -e __pycache__ ]; then exit 3; fi; [ -n "$AIRLOCK_RERUN" ] || exit 1'
    })
    const r = run.report
    expect(r.diff.files.map((f) => f.path).sort()).toEqual([
      '.gitignore',
      'hidden.txt',
      'src/app.js'
    ])
    expect(r.diff.ignored?.entries.map((e) => e.path).sort()).toEqual([
      '__pycache__/',
      'linked',
      'node_modules/'
    ])
    expect(r.policy.protected).toContainEqual(
      expect.objectContaining({ rule: 'ignore-rules', path: '.gitignore' })
    )
    expect(r.tests.rerun?.phase.exitCode).toBe(0)
    expect(r.outcome).toBe('success')
    fs.rmSync(ws, { recursive: true, force: true })
  }, 120_000)
})
