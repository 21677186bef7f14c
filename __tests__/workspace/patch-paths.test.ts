/**
 * A follow-up's carried patch is weighed by the isolation tier: the dependency files it changes
 * are read as git reads the patch (applied in a private index), so no section git applies can
 * hide one — a binary section (how the product's own diff writes a file with a NUL byte), a
 * rename without a hunk, either side of a rename, a quoted name.
 */
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { UNREADABLE_PATCH_PATHS, patchDependencyFiles } from '../../src/pipeline/continuation.js'
import { patchPaths } from '../../src/workspace/patch-paths.js'
import { git } from '../support/git.js'

let repo: string
let base: string

beforeAll(() => {
  repo = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-patch-paths-'))
  git(repo, 'init', '-q', '-b', 'main')
  fs.writeFileSync(path.join(repo, 'README.md'), 'hello\n')
  fs.writeFileSync(path.join(repo, 'notes.txt'), '{"name":"x"}\n')
  fs.writeFileSync(path.join(repo, 'setup.py'), 'print(1)\n')
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '-m', 'base')
  base = git(repo, 'rev-parse', 'HEAD').trim()
})
afterAll(() => fs.rmSync(repo, { recursive: true, force: true }))

/** The patch of a change made by `edit` on the base, as the product writes it (`--binary`). */
function patchOf(edit: () => void): Buffer {
  edit()
  git(repo, 'add', '-A')
  const patch = Buffer.from(
    git(repo, 'diff', '--cached', '--binary', '--full-index', '-M', base),
    'utf8'
  )
  git(repo, 'reset', '-q', '--hard', base)
  git(repo, 'clean', '-qfdx')
  return patch
}

describe('patchDependencyFiles', () => {
  test('an .npmrc written as a binary section (a NUL byte) is a dependency change', async () => {
    const patch = patchOf(() =>
      fs.writeFileSync(path.join(repo, '.npmrc'), 'registry=http://evil.test/\0\n')
    )
    expect(patch.toString('utf8')).toContain('GIT binary patch')
    expect(patch.toString('utf8')).not.toMatch(/^\+\+\+ /m)
    expect(await patchDependencyFiles(repo, base, patch)).toEqual(['.npmrc'])
  })

  test('a rename to package.json with no hunk, and a rename away from setup.py, are dependency changes', async () => {
    const onto = patchOf(() => git(repo, 'mv', 'notes.txt', 'package.json'))
    expect(onto.toString('utf8')).toContain('rename to package.json')
    expect(onto.toString('utf8')).not.toContain('@@')
    expect(await patchDependencyFiles(repo, base, onto)).toEqual(['package.json'])
    const away = patchOf(() => git(repo, 'mv', 'setup.py', 'renamed.py'))
    expect(away.toString('utf8')).toContain('rename from setup.py')
    expect(await patchDependencyFiles(repo, base, away)).toEqual(['setup.py'])
  })

  test('hunks of a manifest and a new lockfile count; a change of other files does not', async () => {
    const patch = patchOf(() => {
      fs.writeFileSync(path.join(repo, 'package.json'), '{"dependencies":{"x":"1"}}\n')
      fs.mkdirSync(path.join(repo, 'web'))
      fs.writeFileSync(path.join(repo, 'web', 'yarn.lock'), 'x@1:\n')
      fs.writeFileSync(path.join(repo, 'README.md'), 'hello, world\n')
    })
    expect(await patchDependencyFiles(repo, base, patch)).toEqual(['package.json', 'web/yarn.lock'])
    const docs = patchOf(() => fs.writeFileSync(path.join(repo, 'README.md'), 'bye\n'))
    expect(await patchDependencyFiles(repo, base, docs)).toEqual([])
  })

  test('a name git quotes is read as git reads it', async () => {
    const patch = patchOf(() => {
      fs.mkdirSync(path.join(repo, 'odd\tdir'))
      fs.writeFileSync(path.join(repo, 'odd\tdir', 'package.json'), '{}\n')
    })
    expect(patch.toString('utf8')).toContain('"b/odd\\tdir/package.json"')
    expect(await patchDependencyFiles(repo, base, patch)).toEqual(['odd\tdir/package.json'])
  })

  test('a patch git refuses counts as a dependency change (fail closed)', async () => {
    const patch = Buffer.from(
      'diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-not this\n+x\n'
    )
    expect(await patchDependencyFiles(repo, base, patch)).toEqual([UNREADABLE_PATCH_PATHS])
  })

  test('reading the paths writes nothing into the repository', async () => {
    const objects = (): string => git(repo, 'count-objects', '-v')
    const before = objects()
    const patch = patchOf(() => fs.writeFileSync(path.join(repo, 'new.txt'), 'new content\n'))
    const again = objects()
    expect(await patchPaths(repo, base, patch)).toEqual({ paths: ['new.txt'] })
    expect(objects()).toBe(again)
    expect(before).toBeDefined()
  })
})
