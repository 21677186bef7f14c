import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { cutAtSection, diffTrees } from '../../src/evidence/diff.js'
import { snapshotWorkspace } from '../../src/evidence/snapshot.js'
import { safeGitEnv } from '../../src/workspace/git.js'
import { materializeTree, prepareWorkspace } from '../../src/workspace/workspace.js'
import { bufPath, makeRepo } from './helpers.js'

const NON_UTF8 = Buffer.from([0x6e, 0xff, 0xfe, 0x2e, 0x74, 0x78, 0x74]) // n\xff\xfe.txt

describe('diff.patch round trip', () => {
  let root: string
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-diff-'))
  })
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

  test('git apply of diff.patch on the base tree gives the agent tree, byte for byte', async () => {
    const binary = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 256))
    makeRepo(path.join(root, 'src'), {
      'README.md': 'hello\n',
      'a file with spaces.txt': 'one\n',
      '-leading-dash.txt': 'dash\n',
      'to-delete.txt': 'bye\n',
      'run.sh': '#!/bin/sh\necho hi\n',
      'image.bin': binary,
      'link-to-readme': { link: 'README.md' },
      'nested/deep/file.txt': 'deep\n'
    })
    const ws = await prepareWorkspace(path.join(root, 'src'), 'HEAD', path.join(root, 'run'))
    const w = (name: string | Buffer, data: string | Buffer, mode = 0o644): void =>
      fs.writeFileSync(bufPath(ws.dir, name), data, { mode })

    // The agent's changes: every kind of entry and awkward name.
    w('README.md', 'hello\nworld\n')
    w('a file with spaces.txt', 'one\ntwo\n')
    w('-leading-dash.txt', 'dash changed\n')
    fs.rmSync(path.join(ws.dir, 'to-delete.txt'))
    fs.chmodSync(path.join(ws.dir, 'run.sh'), 0o755)
    const binary2 = Buffer.from(binary)
    binary2[100] ^= 0xff
    w('image.bin', binary2)
    w('new\nline.txt', 'newline in the name\n')
    w(NON_UTF8, Buffer.from([0xc3, 0x28, 0x0a]))
    w('new-binary.dat', Buffer.from([0, 1, 2, 3, 0, 255]))
    fs.rmSync(path.join(ws.dir, 'link-to-readme'))
    fs.symlinkSync('nested/deep/file.txt', path.join(ws.dir, 'link-to-readme'))
    fs.symlinkSync('../outside', path.join(ws.dir, 'new-link'))
    fs.rmSync(path.join(ws.dir, 'nested'), { recursive: true })
    fs.writeFileSync(path.join(ws.dir, 'nested'), 'a directory became a file\n')

    const snap = await snapshotWorkspace(ws.dir, ws.gitDir)
    const diff = await diffTrees(ws.gitDir, ws.tree, snap.tree)
    expect(diff.truncated).toBe(false)
    expect(diff.totalFiles).toBe(diff.files.length)

    const byPath = Object.fromEntries(diff.files.map((f) => [f.path, f]))
    expect(byPath['to-delete.txt'].status).toBe('deleted')
    expect(byPath['run.sh']).toMatchObject({ status: 'modified', mode: '100755' })
    expect(byPath['image.bin']).toMatchObject({ binary: true })
    expect(byPath['new-link']).toMatchObject({ status: 'added', mode: '120000' })
    expect(byPath['n\\xff\\xfe.txt']).toMatchObject({ status: 'added' })
    expect(byPath['new\nline.txt']).toMatchObject({ status: 'added', additions: 1 })
    expect(byPath['nested/deep/file.txt'].status).toBe('deleted')

    // Apply to a fresh copy of the base tree with plain `git apply` (outside any repository).
    const applied = path.join(root, 'applied')
    fs.mkdirSync(applied)
    await materializeTree(ws.gitDir, ws.tree, applied)
    const patchFile = path.join(root, 'diff.patch')
    fs.writeFileSync(patchFile, diff.patch)
    execFileSync('git', ['apply', '--binary', '--whitespace=nowarn', patchFile], {
      cwd: applied,
      env: safeGitEnv({ GIT_CEILING_DIRECTORIES: root })
    })
    const again = await snapshotWorkspace(applied, ws.gitDir)
    expect(again.tree).toBe(snap.tree)
    expect(fs.readlinkSync(path.join(applied, 'new-link'))).toBe('../outside')
    expect(fs.statSync(path.join(applied, 'run.sh')).mode & 0o111).not.toBe(0)
    expect(fs.readFileSync(path.join(applied, 'image.bin')).equals(binary2)).toBe(true)
    expect(fs.readFileSync(bufPath(applied, NON_UTF8))).toEqual(Buffer.from([0xc3, 0x28, 0x0a]))
  })

  test('limits: the patch is cut at a whole file, the list at max-changed-files, both stated', async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 30; i++) files[`f${String(i).padStart(2, '0')}.txt`] = `${i}\n`
    makeRepo(path.join(root, 'src'), files)
    const ws = await prepareWorkspace(path.join(root, 'src'), 'HEAD', path.join(root, 'run'))
    for (let i = 0; i < 30; i++)
      fs.writeFileSync(
        path.join(ws.dir, `f${String(i).padStart(2, '0')}.txt`),
        'x'.repeat(100) + '\n'
      )
    const snap = await snapshotWorkspace(ws.dir, ws.gitDir)
    const full = await diffTrees(ws.gitDir, ws.tree, snap.tree)
    const limited = await diffTrees(ws.gitDir, ws.tree, snap.tree, {
      maxChangedFiles: 10,
      maxDiffBytes: Math.floor(full.patch.length / 3)
    })
    expect(limited.totalFiles).toBe(30)
    expect(limited.files).toHaveLength(10)
    expect(limited.truncated).toBe(true)
    expect(limited.truncation.join('\n')).toMatch(/max-diff-bytes/)
    expect(limited.truncation.join('\n')).toMatch(
      /30 files changed, more than max-changed-files \(10\)/
    )
    expect(limited.patch.length).toBeLessThanOrEqual(full.patch.length / 3)
    expect(limited.filesInPatch).toBeGreaterThan(0)
    expect(limited.filesInPatch).toBeLessThan(30)
    // What is kept is whole sections: the prefix applies cleanly.
    expect(full.patch.subarray(0, limited.patch.length).equals(limited.patch)).toBe(true)
    const applied = path.join(root, 'applied')
    fs.mkdirSync(applied)
    await materializeTree(ws.gitDir, ws.tree, applied)
    fs.writeFileSync(path.join(root, 'cut.patch'), limited.patch)
    execFileSync('git', ['apply', '--check', path.join(root, 'cut.patch')], {
      cwd: applied,
      env: safeGitEnv({ GIT_CEILING_DIRECTORIES: root })
    })
  })

  test('cutAtSection never keeps a partial section', () => {
    const patch = Buffer.from(
      'diff --git a/x b/x\n+diff --git a/y b/y\n-\ndiff --git a/z b/z\n+zz\n'
    )
    expect(cutAtSection(patch, 1000).equals(patch)).toBe(true)
    expect(cutAtSection(patch, 50).toString()).toBe('diff --git a/x b/x\n+diff --git a/y b/y\n-\n')
    expect(cutAtSection(patch, 10).toString()).toBe('')
  })
})

describe('snapshot trees', () => {
  test('an unchanged workspace snapshots to the base tree (git ordering of tricky names)', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-snap-'))
    try {
      const files: Record<string, string | { exec: string } | { link: string }> = {
        'a-b': '1',
        'a.c': '2',
        'a/b': '3',
        'a/b.c/d': '4',
        a0: '5',
        'a b/c': '6',
        'x/y/z/deep.sh': { exec: '#!/bin/sh\n' },
        'x/link': { link: '../a0' },
        'ü/ñ.txt': 'unicode'
      }
      makeRepo(path.join(root, 'src'), files)
      const ws = await prepareWorkspace(path.join(root, 'src'), 'HEAD', path.join(root, 'run'))
      expect((await snapshotWorkspace(ws.dir, ws.gitDir, undefined, ws.tree)).tree).toBe(ws.tree)
      expect((await snapshotWorkspace(ws.dir, ws.gitDir)).tree).toBe(ws.tree)
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  })
})

describe('an unchanged tree', () => {
  it('is no change, told without a git process (the repository is not even read)', async () => {
    const tree = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'
    const d = await diffTrees(path.join(os.tmpdir(), 'no-such-git-dir'), tree, tree)
    expect(d).toEqual({
      patch: Buffer.alloc(0),
      files: [],
      blobs: [],
      all: { files: [], blobs: [] },
      totalFiles: 0,
      filesInPatch: 0,
      truncated: false,
      truncation: []
    })
  })
})
