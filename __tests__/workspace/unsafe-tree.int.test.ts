import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { UnsafePathError } from '../../src/git-path.js'
import { prepareWorkspace } from '../../src/workspace/workspace.js'
import { blob, commitTree, craftTree } from '../support/crafted-tree.js'
import { git, makeWorkspace, runAirlock } from '../support/run.js'

// A pull request's commit can hold tree entries that git itself never checks out (`..`, `.git`
// aliases): `git clone` refuses such a commit, but a fetched ref or `ref` reaches the workspace
// writer, which must check every path before it writes, the way git does.
describe('a crafted tree of the pull request', () => {
  let ws: string
  let outside: string
  beforeEach(() => {
    ws = makeWorkspace({ 'README.md': 'hello\n' })
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-escape-'))
  })
  afterEach(() => {
    fs.rmSync(ws, { recursive: true, force: true })
    fs.rmSync(outside, { recursive: true, force: true })
  })

  /** A commit whose tree holds `../../../pwned` (three `..` trees deep) beside README.md. */
  function climbing(repo: string): string {
    const pwned = blob(repo, 'written outside the workspace\n')
    let tree = craftTree(repo, [['100644', 'pwned', pwned]])
    for (let i = 0; i < 3; i++) tree = craftTree(repo, [['40000', '..', tree]])
    const readme = git(repo, 'rev-parse', 'HEAD:README.md').trim()
    return commitTree(
      repo,
      craftTree(repo, [
        ['40000', '..', tree],
        ['100644', 'README.md', readme]
      ]),
      'climb'
    )
  }

  it('writes nothing outside the workspace: `..` entries are refused before any write', async () => {
    const repo = path.join(ws, 'repo')
    const commit = climbing(repo)
    // root/a/b/workspace/../../../../pwned is outside/pwned.
    const root = path.join(outside, 'a', 'b')
    fs.mkdirSync(root, { recursive: true })
    const made = prepareWorkspace(repo, commit, root)
    await expect(made).rejects.toBeInstanceOf(UnsafePathError)
    await expect(made).rejects.toThrow(/"\.\.\/\.\.\/\.\.\/\.\.\/pwned" \(has a "\.\." component\)/)
    expect(fs.existsSync(path.join(outside, 'pwned'))).toBe(false)
    expect(fs.readdirSync(outside)).toEqual(['a'])
  })

  it.each([
    ['.GIT', 'hooks'],
    ['.g\u200cit', 'hooks'],
    ['git~1', 'hooks'],
    ['.git.', 'hooks'],
    ['.git ', 'hooks']
  ])('refuses a .git alias %j in the tree', async (alias, inner) => {
    const repo = path.join(ws, 'repo')
    const hook = blob(repo, '#!/bin/sh\necho owned\n')
    const sub = craftTree(repo, [['100755', inner, hook]])
    const commit = commitTree(repo, craftTree(repo, [['40000', alias, sub]]), 'alias')
    const root = fs.mkdtempSync(path.join(outside, 'ws-'))
    await expect(prepareWorkspace(repo, commit, root)).rejects.toBeInstanceOf(UnsafePathError)
  })

  it('a run on such a ref ends as a policy violation, not a success', async () => {
    const repo = path.join(ws, 'repo')
    const commit = climbing(repo)
    const tempRoot = fs.mkdtempSync(path.join(outside, 'tmp-'))
    const run = await runAirlock(
      ws,
      { ref: commit, 'agent-command': 'true', task: 'nothing' },
      { tempRoot }
    )
    expect(run.report.outcome).toBe('policy-violation')
    expect(run.report.policy.violations).toEqual([
      { rule: 'unsafe-path', path: '../../../../pwned', detail: 'has a ".." component' }
    ])
    const all = (dir: string): string[] =>
      fs
        .readdirSync(dir, { withFileTypes: true, recursive: true })
        .map((e) => path.join(e.parentPath, e.name))
    expect(all(outside).filter((p) => p.endsWith('pwned'))).toEqual([])
  })
})
