// A follow-up on the same head starts from the earlier run's patch: applied to the head's tree in
// the private git dir (never a checkout), the workspace written from that tree, the diff still
// taken against the head. A hostile patch (paths into .git, out of the tree) writes nothing.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { CarryRefused, prepareWorkspace } from '../../src/workspace/workspace.js'
import { git } from '../support/git.js'

let tmp: string
let repo: string
let head: string
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-carry-patch-'))
  repo = path.join(tmp, 'repo')
  fs.mkdirSync(repo)
  git(repo, 'init', '-q')
  fs.writeFileSync(path.join(repo, 'README.md'), 'hello\n')
  git(repo, 'add', '.')
  git(repo, 'commit', '-q', '-m', 'base')
  head = git(repo, 'rev-parse', 'HEAD').trim()
})
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }))

const newFile = (p: string): string =>
  `diff --git a/${p} b/${p}\nnew file mode 100644\n--- /dev/null\n+++ b/${p}\n@@ -0,0 +1 @@\n+pwned\n`

test('the patch is in the workspace before the agent starts; the diff base stays the head', async () => {
  const patch = Buffer.from(
    'diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-hello\n+hello, world\n' +
      newFile('docs/fix.md')
  )
  const ws = await prepareWorkspace(repo, 'HEAD', path.join(tmp, 'run'), undefined, {
    carry: patch
  })
  expect(ws.commit).toBe(head)
  expect(fs.readFileSync(path.join(ws.dir, 'README.md'), 'utf8')).toBe('hello, world\n')
  expect(fs.readFileSync(path.join(ws.dir, 'docs/fix.md'), 'utf8')).toBe('pwned\n')
  expect(ws.tree).toBe(git(repo, 'rev-parse', 'HEAD^{tree}').trim())
  expect(ws.startTree).not.toBe(ws.tree)
  // The repository the run reads from is untouched.
  expect(git(repo, 'status', '--porcelain')).toBe('')
})

test('without a patch the start is the head tree', async () => {
  const ws = await prepareWorkspace(repo, 'HEAD', path.join(tmp, 'run'))
  expect(ws.startTree).toBe(ws.tree)
})

test.each([
  ['.git/hooks/post-checkout', newFile('.git/hooks/post-checkout')],
  ['.GIT/config (case alias)', newFile('.GIT/config')],
  ['git~1/config (NTFS short name)', newFile('git~1/config')],
  ['../outside', newFile('../outside')],
  ['a/../../outside', newFile('a/../../outside')],
  [
    'a patch that does not fit the head',
    'diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-goodbye\n+hello\n'
  ]
])('%s: refused, nothing written outside or inside', async (_n, patch) => {
  const run = path.join(tmp, 'run')
  await expect(
    prepareWorkspace(repo, 'HEAD', run, undefined, { carry: Buffer.from(patch) })
  ).rejects.toThrow(CarryRefused)
  expect(fs.existsSync(path.join(tmp, 'outside'))).toBe(false)
  expect(fs.existsSync(path.join(run, 'workspace', 'README.md'))).toBe(false)
  expect(fs.readdirSync(path.join(repo, '.git', 'hooks')).includes('post-checkout')).toBe(false)
})
