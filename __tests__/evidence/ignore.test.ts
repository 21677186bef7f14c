import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { diffTrees } from '../../src/evidence/diff.js'
import {
  DEFAULT_IGNORE_SOURCE,
  baseIgnoreRules,
  ignoreFindings
} from '../../src/evidence/ignore.js'
import { snapshotWorkspace } from '../../src/evidence/snapshot.js'
import { safeGitEnv } from '../../src/workspace/git.js'
import { prepareWorkspace } from '../../src/workspace/workspace.js'

const env = safeGitEnv({
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.invalid'
})
const run = (cwd: string, ...args: string[]): Buffer =>
  execFileSync('git', ['-c', 'core.hooksPath=/dev/null', ...args], { cwd, env })

function write(root: string, files: Record<string, string | { link: string }>): void {
  for (const [name, content] of Object.entries(files)) {
    const p = path.join(root, name)
    fs.mkdirSync(path.dirname(p), { recursive: true })
    if (typeof content === 'object') fs.symlinkSync(content.link, p)
    else fs.writeFileSync(p, content)
  }
}

const RULES: Record<string, string> = {
  '.gitignore': [
    '# build output',
    'node_modules/',
    '__pycache__/',
    '*.pyc',
    '/build',
    '*.log',
    '!keep.log',
    'docs/**/*.tmp',
    '\\#hash',
    'dist/',
    'linked',
    'trailing\\ ',
    ''
  ].join('\n'),
  'sub/.gitignore': '!*.pyc\nlocal.txt\n/anchored\n',
  'sub/deep/.gitignore': '*.txt\n!important.txt\n'
}

/** What the agent writes: build output, look-alikes, and files that must stay in the diff. */
const AGENT_FILES: Record<string, string | { link: string }> = {
  'node_modules/left-pad/index.js': 'module.exports = 1\n',
  'node_modules/.bin/x': 'x\n',
  '__pycache__/m.pyc': 'pyc',
  'a.pyc': 'pyc',
  'sub/b.pyc': 'kept: unignored in sub/',
  'sub/local.txt': 'local',
  'sub/anchored': 'anchored in sub',
  'sub/x/anchored': 'not anchored here',
  'build/out.js': 'out',
  'x/build': 'build not at the root',
  'err.log': 'log',
  'keep.log': 'kept by negation',
  'docs/a/b/c.tmp': 'tmp',
  'docs/c.tmp': 'tmp',
  '#hash': 'escaped hash',
  'trailing ': 'escaped trailing space',
  'sub/deep/a.txt': 'ignored by the deepest file',
  'sub/deep/important.txt': 'unignored by the deepest file',
  'sub/deep/more/n.txt': 'ignored',
  'dist/new.js': 'untracked in an ignored folder that has tracked files',
  'BUILD/x': 'case matters',
  'src/app.js': 'a real change\n',
  // A symlink out of the workspace, by a name the rules ignore: listed, never followed.
  linked: { link: '/etc' },
  // A dir-only rule does not match a symlink (as in git): it is a change like any other.
  'pkg/node_modules': { link: '/etc' }
}

/** Files and symlinks under `dir`, relative, without following links. */
function allFiles(dir: string, rel = ''): string[] {
  const out: string[] = []
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const p = rel === '' ? e.name : `${rel}/${e.name}`
    if (e.isDirectory()) out.push(...allFiles(dir, p))
    else out.push(p)
  }
  return out
}

describe('base .gitignore rules', () => {
  let root: string
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-ignore-'))
  })
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

  function baseRepo(): string {
    const src = path.join(root, 'src')
    fs.mkdirSync(src)
    run(src, 'init', '-q', '-b', 'main')
    write(src, { ...RULES, 'README.md': 'hi\n', 'src/app.js': 'old\n' })
    // Tracked although the rules ignore it (git add -f): changes to it stay in the diff.
    write(src, { 'dist/index.js': 'tracked build\n' })
    run(src, 'add', '-A')
    run(src, 'add', '-f', 'dist/index.js')
    run(src, 'commit', '-q', '-m', 'base')
    return src
  }

  test('the snapshot leaves out what git leaves out (checked against git itself)', async () => {
    const src = baseRepo()
    const ws = await prepareWorkspace(src, 'HEAD', path.join(root, 'run'))
    write(ws.dir, AGENT_FILES)
    fs.writeFileSync(path.join(ws.dir, 'dist/index.js'), 'changed tracked build\n')

    const rules = await baseIgnoreRules(ws.gitDir, ws.tree)
    const snap = await snapshotWorkspace(ws.dir, ws.gitDir, undefined, ws.tree, rules)
    const diff = await diffTrees(ws.gitDir, ws.tree, snap.tree)
    const changed = diff.files.map((f) => f.path).sort()

    // The same files in a real checkout; git says which are ignored.
    const check = path.join(root, 'check')
    run(root, 'clone', '-q', src, check)
    write(check, AGENT_FILES)
    fs.writeFileSync(path.join(check, 'dist/index.js'), 'changed tracked build\n')
    const gitIgnored = run(check, 'ls-files', '-z', '--others', '--ignored', '--exclude-standard')
      .toString('latin1')
      .split('\0')
      .filter(Boolean)
      .sort()
    // Every file under an entry we left out (a folder is listed once, not looked into).
    const ours = allFiles(ws.dir).filter((f) =>
      snap.ignored.some((i) => (i.path.endsWith('/') ? f.startsWith(i.path) : f === i.path))
    )
    expect(ours.sort()).toEqual(gitIgnored)
    expect(snap.ignoredTotal).toBe(snap.ignored.length)

    // Per file, as `git check-ignore` answers (tracked files are never ignored).
    const agentPaths = [...Object.keys(AGENT_FILES), 'dist/index.js']
    const perFile = execFileSync(
      'git',
      ['-c', 'core.hooksPath=/dev/null', 'check-ignore', '-z', '--stdin'],
      { cwd: check, env, input: agentPaths.join('\0') + '\0' }
    )
      .toString('latin1')
      .split('\0')
      .filter(Boolean)
    const inDiff = new Set(changed)
    for (const p of agentPaths) {
      if (perFile.includes(p)) expect({ p, inDiff: inDiff.has(p) }).toEqual({ p, inDiff: false })
      else expect({ p, inDiff: inDiff.has(p) }).toEqual({ p, inDiff: true })
    }

    // The cases the issue names.
    expect(changed).not.toContain('node_modules/left-pad/index.js')
    expect(changed).not.toContain('__pycache__/m.pyc')
    expect(changed).toContain('dist/index.js')
    expect(changed).toContain('pkg/node_modules')
    expect(snap.ignored).toContainEqual({
      path: 'node_modules/',
      rule: 'node_modules/ (.gitignore)'
    })
    expect(snap.ignored).toContainEqual({ path: 'linked', rule: 'linked (.gitignore)' })
    // The symlinks are stored as links: nothing of /etc is read.
    expect(diff.patch.toString()).not.toMatch(/root:x:0:0/)
    expect(diff.files.find((f) => f.path === 'pkg/node_modules')?.mode).toBe('120000')
  })

  test("the agent's .gitignore edit does not hide its files; the edit is in the diff and flagged", async () => {
    const src = baseRepo()
    const ws = await prepareWorkspace(src, 'HEAD', path.join(root, 'run'))
    fs.appendFileSync(path.join(ws.dir, '.gitignore'), 'secret-change.js\nsrc/\n')
    write(ws.dir, {
      'sub/new/.gitignore': '*\n',
      'sub/new/hidden.js': 'x',
      'secret-change.js': 'x'
    })
    fs.writeFileSync(path.join(ws.dir, 'src/app.js'), 'new\n')

    const rules = await baseIgnoreRules(ws.gitDir, ws.tree)
    const snap = await snapshotWorkspace(ws.dir, ws.gitDir, undefined, ws.tree, rules)
    const diff = await diffTrees(ws.gitDir, ws.tree, snap.tree)
    const changed = diff.files.map((f) => f.path).sort()
    expect(changed).toEqual([
      '.gitignore',
      'secret-change.js',
      'src/app.js',
      'sub/new/.gitignore',
      'sub/new/hidden.js'
    ])
    const findings = ignoreFindings(diff.all.files, snap)
    expect(findings.map((f) => f.path)).toEqual(['.gitignore', 'sub/new/.gitignore'])
    expect(findings[0]).toMatchObject({ rule: 'ignore-rules' })
    expect(findings[0].detail).toMatch(/base tree's rules/)
  })

  test('without rules in the base tree only the default tool-output list applies', async () => {
    const src = path.join(root, 'plain')
    fs.mkdirSync(src)
    run(src, 'init', '-q', '-b', 'main')
    write(src, { 'a.txt': 'a' })
    run(src, 'add', '-A')
    run(src, 'commit', '-q', '-m', 'base')
    const ws = await prepareWorkspace(src, 'HEAD', path.join(root, 'run'))
    write(ws.dir, { 'node_modules/x.js': 'x', 'lib/node_modules.txt': 'kept' })
    const rules = await baseIgnoreRules(ws.gitDir, ws.tree)
    const snap = await snapshotWorkspace(ws.dir, ws.gitDir, undefined, ws.tree, rules)
    expect(snap.ignored).toEqual([
      { path: 'node_modules/', rule: `node_modules/ (${DEFAULT_IGNORE_SOURCE})` }
    ])
    const diff = await diffTrees(ws.gitDir, ws.tree, snap.tree)
    expect(diff.files.map((f) => f.path)).toEqual(['lib/node_modules.txt'])
    // Without the default list: nothing is ignored.
    const none = await baseIgnoreRules(ws.gitDir, ws.tree, undefined, [])
    expect(none.empty).toBe(true)
  })

  test('a pytest run: its cache (whose own .gitignore says *) stays out; only the source change is in the diff', async () => {
    const src = path.join(root, 'pylib')
    fs.mkdirSync(src)
    run(src, 'init', '-q', '-b', 'main')
    // A real project's .gitignore that does not name the tool caches.
    write(src, {
      '.gitignore': 'dist/\n',
      'pylib/__init__.py': 'def add(a, b):\n    return a - b\n',
      'tests/test_add.py': 'from pylib import add\n\ndef test_add():\n    assert add(1, 2) == 3\n'
    })
    run(src, 'add', '-A')
    run(src, 'commit', '-q', '-m', 'base')
    const ws = await prepareWorkspace(src, 'HEAD', path.join(root, 'run'))
    write(ws.dir, {
      'pylib/__init__.py': 'def add(a, b):\n    return a + b\n',
      '.pytest_cache/.gitignore': '# Created by pytest automatically.\n*\n',
      '.pytest_cache/CACHEDIR.TAG': 'Signature: 8a477f597d28d172789f06886806bc55\n',
      '.pytest_cache/README.md': '# pytest cache directory #\n',
      '.pytest_cache/v/cache/nodeids': '[]\n',
      '.pytest_cache/v/cache/lastfailed': '{}\n',
      'pylib/__pycache__/__init__.cpython-311.pyc': 'pyc',
      'tests/__pycache__/test_add.cpython-311-pytest-7.4.pyc': 'pyc',
      '.mypy_cache/3.11/x.json': '{}',
      '.venv/bin/python': 'x'
    })
    const rules = await baseIgnoreRules(ws.gitDir, ws.tree)
    const snap = await snapshotWorkspace(ws.dir, ws.gitDir, undefined, ws.tree, rules)
    const diff = await diffTrees(ws.gitDir, ws.tree, snap.tree)
    expect(diff.files.map((f) => f.path)).toEqual(['pylib/__init__.py'])
    expect(ignoreFindings(diff.all.files, snap)).toEqual([])
    expect(snap.ignored.map((i) => i.path).sort()).toEqual([
      '.mypy_cache/',
      '.pytest_cache/',
      '.venv/',
      'pylib/__pycache__/',
      'tests/__pycache__/'
    ])
  })

  test("the base tree's .gitignore re-includes a default (a negated rule wins over the list)", async () => {
    const src = path.join(root, 'venv-kept')
    fs.mkdirSync(src)
    run(src, 'init', '-q', '-b', 'main')
    write(src, { '.gitignore': '!.venv/\n', 'a.txt': 'a' })
    run(src, 'add', '-A')
    run(src, 'commit', '-q', '-m', 'base')
    const ws = await prepareWorkspace(src, 'HEAD', path.join(root, 'run'))
    write(ws.dir, { '.venv/marker': 'x', '.tox/py/x': 'x' })
    const rules = await baseIgnoreRules(ws.gitDir, ws.tree)
    const snap = await snapshotWorkspace(ws.dir, ws.gitDir, undefined, ws.tree, rules)
    const diff = await diffTrees(ws.gitDir, ws.tree, snap.tree)
    expect(diff.files.map((f) => f.path)).toEqual(['.venv/marker'])
    expect(snap.ignored.map((i) => i.path)).toEqual(['.tox/'])
  })

  test('ignored files do not count against the snapshot limits', async () => {
    const src = baseRepo()
    const ws = await prepareWorkspace(src, 'HEAD', path.join(root, 'run'))
    for (let i = 0; i < 50; i++) write(ws.dir, { [`node_modules/p${i}/index.js`]: `${i}` })
    write(ws.dir, { 'src/new.js': 'x' })
    const rules = await baseIgnoreRules(ws.gitDir, ws.tree)
    const limits = { maxFiles: 10, maxBytes: 1024 * 1024 }
    const snap = await snapshotWorkspace(ws.dir, ws.gitDir, limits, ws.tree, rules)
    expect(snap.truncated).toBe(false)
    expect(snap.ignored).toEqual([{ path: 'node_modules/', rule: 'node_modules/ (.gitignore)' }])
  })
})
