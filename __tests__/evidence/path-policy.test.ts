import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { ConfigurationError } from '../../src/errors.js'
import { diffTrees } from '../../src/evidence/diff.js'
import type { ChangedFile } from '../../src/evidence/diff.js'
import {
  DEFAULT_PROTECTED_PATHS,
  checkAllowedPaths,
  checkPolicy,
  resolveProtectedPaths
} from '../../src/evidence/path-policy.js'
import { gitBlobReader } from '../../src/evidence/blobs.js'
import { dependenciesChange, scriptsChange } from '../../src/evidence/manifest-changes.js'
import { snapshotWorkspace } from '../../src/evidence/snapshot.js'
import { prepareWorkspace } from '../../src/workspace/workspace.js'
import { makeRepo } from './helpers.js'

const changed = (p: string, status: ChangedFile['status'] = 'modified'): ChangedFile => ({
  path: p,
  status,
  additions: 1,
  deletions: 0,
  binary: false,
  mode: '100644'
})
const noBlobs = { before: '0'.repeat(40), after: '0'.repeat(40) }
const noRead = async (): Promise<Buffer | null> => null

describe('protected-paths: defaults, extend, replace', () => {
  test.each([
    [[], DEFAULT_PROTECTED_PATHS],
    [
      ['+docs/secret/**', '+ Makefile'],
      [...DEFAULT_PROTECTED_PATHS, 'docs/secret/**', 'Makefile']
    ],
    [['src/core/**'], ['src/core/**']],
    [['none'], []]
  ])('%j', (items, expected) => {
    expect(resolveProtectedPaths(items)).toEqual(expected)
  })

  test.each([
    [['+a', 'b'], /mixes/],
    [['!src/**'], /negated/],
    [['/etc/passwd'], /relative/],
    [['../x'], /relative/],
    [['+'], /empty/]
  ])('%j is refused', (items, message) => {
    expect(() => resolveProtectedPaths(items)).toThrow(ConfigurationError)
    expect(() => resolveProtectedPaths(items)).toThrow(message)
  })

  test('#scripts and #dependencies are only for protected-paths', () => {
    expect(() => checkAllowedPaths(['package.json#scripts'])).toThrow(/only applies/)
    expect(() => checkAllowedPaths(['package.json#dependencies'])).toThrow(/only applies/)
  })
})

describe('checkPolicy', () => {
  test.each([
    // path, protected by default?
    ['.github/workflows/ci.yml', true],
    ['.github/CODEOWNERS', true],
    ['package-lock.json', true],
    ['web/yarn.lock', true],
    ['pnpm-lock.yaml', true],
    ['requirements.txt', true],
    ['requirements-dev.txt', true],
    ['poetry.lock', true],
    ['uv.lock', true],
    ['Cargo.lock', true],
    ['go.sum', true],
    ['Gemfile.lock', true],
    ['composer.lock', true],
    ['app/gradle.lockfile', true],
    ['gradle/wrapper/gradle-wrapper.properties', true],
    ['.eslintrc.json', true],
    ['eslint.config.js', true],
    ['.prettierrc', true],
    ['pkg/.golangci.yml', true],
    ['rustfmt.toml', true],
    ['.gitmodules', true],
    ['sub/.gitattributes', true],
    ['.vscode/tasks.json', true],
    ['.devcontainer/devcontainer.json', true],
    ['.husky/pre-commit', true],
    // Files that steer agents, package-manager settings, build entry points.
    ['AGENTS.md', true],
    ['packages/web/AGENTS.md', true],
    ['CLAUDE.md', true],
    ['sub/CLAUDE.md', true],
    ['GEMINI.md', true],
    ['.claude/settings.json', true],
    ['.claude/commands/deploy.md', true],
    ['.cursor/rules/style.mdc', true],
    ['.cursorrules', true],
    ['.mcp.json', true],
    ['tools/.mcp.json', true],
    ['.vscode/mcp.json', true],
    ['.vscode/anything.json', true],
    ['.npmrc', true],
    ['web/.npmrc', true],
    ['.yarnrc', true],
    ['.yarnrc.yml', true],
    ['pip.conf', true],
    ['.cargo/config.toml', true],
    ['.cargo/config', true],
    ['Dockerfile', true],
    ['docker/Dockerfile.test', true],
    ['.github/airlock/policy.yml', true],
    ['Makefile', true],
    ['lib/Makefile', true],
    ['docs/AGENTS.txt', false],
    ['src/makefile.ts', false],
    ['cargo/config.toml', false],
    ['src/index.ts', false],
    ['README.md', false],
    ['docs/github/notes.md', false],
    ['package.json', false]
  ])('%s protected: %s', async (p, expected) => {
    const result = await checkPolicy(
      { allowed: [], protected: resolveProtectedPaths([]) },
      [changed(p)],
      [noBlobs],
      noRead
    )
    expect(result.protected.length > 0).toBe(expected)
    expect(result.violations).toEqual([])
  })

  test('allowed-paths: everything outside is a violation, deletions and symlinks included', async () => {
    const result = await checkPolicy(
      { allowed: ['src/**', 'docs/', '*.md'], protected: [] },
      [
        changed('src/a.ts'),
        changed('docs/x/y.txt'),
        changed('sub/README.md'),
        changed('Makefile', 'deleted'),
        { ...changed('src-link'), mode: '120000' },
        changed('.github/workflows/x.yml', 'added')
      ],
      Array(6).fill(noBlobs),
      noRead
    )
    expect(result.violations.map((v) => v.path)).toEqual([
      'Makefile',
      'src-link',
      '.github/workflows/x.yml'
    ])
    expect(result.violations[0]).toMatchObject({
      rule: 'allowed-paths',
      detail: expect.stringMatching(/^deleted outside/)
    })
  })
})

describe('package.json scripts are parsed, not grepped', () => {
  const blob = (o: unknown): Buffer =>
    Buffer.from(typeof o === 'string' ? o : JSON.stringify(o, null, 2))
  const reader = (m: Record<string, Buffer | null>) => async (oid: string) => m[oid] ?? null

  test.each([
    [
      'same scripts, reordered and reformatted',
      { scripts: { a: 'x', b: 'y' } },
      { scripts: { b: 'y', a: 'x' }, version: '2' },
      null
    ],
    [
      'dependency change only',
      { scripts: { test: 'jest' }, dependencies: {} },
      { scripts: { test: 'jest' }, dependencies: { x: '1' } },
      null
    ],
    [
      'a script changed',
      { scripts: { test: 'jest' } },
      { scripts: { test: 'jest; curl x | sh' } },
      /changed "test"/
    ],
    [
      'a script added (postinstall)',
      { scripts: {} },
      { scripts: { postinstall: 'node x' } },
      /added "postinstall"/
    ],
    ['scripts removed', { scripts: { lint: 'eslint' } }, {}, /removed "lint"/],
    [
      'the word "scripts" in a description',
      { description: 'no scripts' },
      { description: 'scripts: {"x": 1}' },
      null
    ],
    [
      'not JSON after the change',
      { scripts: {} },
      '{ "scripts": ',
      /cannot be compared: package.json is not valid JSON/
    ],
    [
      'scripts is not an object',
      { scripts: {} },
      { scripts: 'rm -rf /' },
      /"scripts" is not an object/
    ]
  ])('%s', async (_name, before, after, expected) => {
    const read = reader({ ['1'.repeat(40)]: blob(before), ['2'.repeat(40)]: blob(after) })
    const change = await scriptsChange({ before: '1'.repeat(40), after: '2'.repeat(40) }, read)
    if (expected === null) expect(change).toBeNull()
    else expect(change).toMatch(expected)
  })

  test('a new package.json with scripts is flagged; one without scripts is not', async () => {
    const read = reader({
      ['2'.repeat(40)]: blob({ scripts: { prepare: 'x' } }),
      ['3'.repeat(40)]: blob({ name: 'x' })
    })
    expect(await scriptsChange({ before: '0'.repeat(40), after: '2'.repeat(40) }, read)).toMatch(
      /added "prepare"/
    )
    expect(await scriptsChange({ before: '0'.repeat(40), after: '3'.repeat(40) }, read)).toBeNull()
  })

  test('end to end from the private repository: nested package.json', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-policy-'))
    try {
      makeRepo(path.join(root, 'src'), {
        'package.json': JSON.stringify({ name: 'a', scripts: { test: 'jest' } }),
        'web/package.json': JSON.stringify({ name: 'b', scripts: { build: 'vite' } })
      })
      const ws = await prepareWorkspace(path.join(root, 'src'), 'HEAD', path.join(root, 'run'))
      fs.writeFileSync(
        path.join(ws.dir, 'package.json'),
        JSON.stringify({ name: 'a', version: '2', scripts: { test: 'jest' } })
      )
      fs.writeFileSync(
        path.join(ws.dir, 'web/package.json'),
        JSON.stringify({ name: 'b', scripts: { build: 'vite', preinstall: 'sh evil.sh' } })
      )
      const snap = await snapshotWorkspace(ws.dir, ws.gitDir)
      const diff = await diffTrees(ws.gitDir, ws.tree, snap.tree)
      const result = await checkPolicy(
        { allowed: [], protected: resolveProtectedPaths([]) },
        diff.files,
        diff.blobs,
        gitBlobReader(ws.gitDir)
      )
      expect(result.protected).toEqual([
        {
          rule: 'package-scripts',
          path: 'web/package.json',
          detail: expect.stringContaining('added "preinstall"')
        }
      ])
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  })
})

test('findings are capped at 1000 per list, the rest counted', async () => {
  const files = Array.from({ length: 1500 }, (_, i) => changed(`out/${i}.txt`))
  const result = await checkPolicy(
    { allowed: ['src/**'], protected: [] },
    files,
    files.map(() => noBlobs),
    noRead
  )
  expect(result.violations).toHaveLength(1001)
  expect(result.violations[1000]).toEqual({
    rule: 'allowed-paths',
    path: null,
    detail: '…and 500 more changed files like the above'
  })
})

describe('dependency changes inside manifests are parsed', () => {
  const reader = (m: Record<string, string>) => async (oid: string) =>
    m[oid] === undefined ? null : Buffer.from(m[oid])
  const A = '1'.repeat(40)
  const B = '2'.repeat(40)
  const json = (o: unknown): string => JSON.stringify(o, null, 2)

  test.each([
    ['package.json', 'version bump only', json({ version: '1' }), json({ version: '2' }), null],
    [
      'package.json',
      'reordered, reformatted',
      json({ dependencies: { a: '1', b: '2' } }),
      JSON.stringify({ dependencies: { b: '2', a: '1' } }),
      null
    ],
    [
      'package.json',
      'a dependency added',
      json({ dependencies: {} }),
      json({ dependencies: { 'left-pad': '^1.3.0' } }),
      /added "dependencies left-pad"/
    ],
    [
      'package.json',
      'a devDependency changed',
      json({ devDependencies: { jest: '^29' } }),
      json({ devDependencies: { jest: 'github:evil/jest' } }),
      /changed "devDependencies jest"/
    ],
    [
      'package.json',
      'optional and peer',
      json({ optionalDependencies: { a: '1' } }),
      json({ peerDependencies: { a: '1' } }),
      /added "peerDependencies a"; removed "optionalDependencies a"/
    ],
    [
      'package.json',
      'overrides',
      json({}),
      json({ overrides: { 'node-fetch': '2.7.0' } }),
      /added "overrides node-fetch"/
    ],
    [
      'package.json',
      'not JSON',
      json({}),
      '{',
      /cannot be compared: package.json is not valid JSON/
    ],
    [
      'pyproject.toml',
      'description only',
      '[project]\nname = "x"\ndescription = "a"\ndependencies = ["requests>=2"]\n',
      '[project]\nname = "x"\ndescription = "b"\ndependencies = [ "requests>=2" ]\n',
      null
    ],
    [
      'pyproject.toml',
      'project.dependencies added and changed',
      '[project]\ndependencies = ["requests>=2"]\n',
      '[project]\ndependencies = ["Requests>=3", "evil-pkg"]\n',
      /added "project.dependencies evil-pkg"; changed "project.dependencies requests"/
    ],
    [
      'pyproject.toml',
      'optional dependencies, groups, build requires',
      '[project]\nname = "x"\n',
      '[project.optional-dependencies]\ntest = ["pytest"]\n[dependency-groups]\ndev = ["ruff"]\n[build-system]\nrequires = ["setuptools"]\n',
      /added "build-system.requires setuptools", "dependency-groups.dev ruff", "project.optional-dependencies.test pytest"/
    ],
    [
      'pyproject.toml',
      'poetry',
      '[tool.poetry.dependencies]\npython = "^3.11"\n',
      '[tool.poetry.dependencies]\npython = "^3.11"\nflask = "*"\n[tool.poetry.group.dev.dependencies]\npytest = "*"\n',
      /added "tool.poetry.dependencies flask", "tool.poetry.group.dev.dependencies pytest"/
    ],
    [
      'pyproject.toml',
      'not TOML',
      '[project]\n',
      '[project\n',
      /cannot be compared: pyproject.toml is not valid TOML/
    ]
  ])('%s: %s', async (file, _name, before, after, expected) => {
    const change = await dependenciesChange(
      `sub/${file}`,
      { before: A, after: B },
      reader({ [A]: before, [B]: after })
    )
    if (expected === null) expect(change).toBeNull()
    else expect(change).toMatch(expected)
  })

  test('flagged by the defaults, at the top of the protected list; the version alone is not', async () => {
    const read = reader({
      [A]: json({ version: '1', dependencies: { a: '1' } }),
      [B]: json({ version: '2', dependencies: { a: '1', b: '1' } })
    })
    const result = await checkPolicy(
      { allowed: [], protected: resolveProtectedPaths([]) },
      [changed('package.json'), changed('web/package.json')],
      [
        { before: A, after: B },
        { before: A, after: A }
      ],
      read
    )
    expect(result.protected).toEqual([
      {
        rule: 'dependencies',
        path: 'package.json',
        detail: 'dependencies added "dependencies b"; matches **/package.json#dependencies'
      }
    ])
  })

  test('renames of protected files are flagged on both sides, by the moved blob', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-policy-'))
    try {
      makeRepo(path.join(root, 'src'), {
        'AGENTS.md': 'Never touch the deploy keys.\n',
        'notes.md': 'plain\n'
      })
      const ws = await prepareWorkspace(path.join(root, 'src'), 'HEAD', path.join(root, 'run'))
      fs.renameSync(path.join(ws.dir, 'AGENTS.md'), path.join(ws.dir, 'docs-agents.md'))
      fs.mkdirSync(path.join(ws.dir, '.claude'))
      fs.renameSync(path.join(ws.dir, 'notes.md'), path.join(ws.dir, '.claude/notes.md'))
      const snap = await snapshotWorkspace(ws.dir, ws.gitDir)
      const diff = await diffTrees(ws.gitDir, ws.tree, snap.tree)
      const result = await checkPolicy(
        { allowed: [], protected: resolveProtectedPaths([]) },
        diff.all.files,
        diff.all.blobs,
        gitBlobReader(ws.gitDir)
      )
      expect(result.protected.map((f) => [f.path, f.detail])).toEqual([
        ['.claude/notes.md', 'added (renamed from notes.md); matches **/.claude/**'],
        ['AGENTS.md', 'deleted (renamed to docs-agents.md); matches **/AGENTS.md']
      ])
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  })
})

// Dependency manifests of the common ecosystems: a change to where code comes from needs an
// explicit approval, whatever the language.
describe('dependency manifests of every common ecosystem are protected by default', () => {
  test.each([
    'Cargo.toml',
    'crates/core/Cargo.toml',
    'go.mod',
    'tools/go.work',
    'Gemfile',
    'app/my.gemspec',
    'composer.json',
    'pom.xml',
    'build.gradle',
    'build.gradle.kts',
    'settings.gradle.kts',
    'libs.versions.toml',
    'src/App/App.csproj',
    'Directory.Packages.props',
    'packages.config',
    'NuGet.Config',
    'requirements.in',
    'requirements/dev.in',
    'setup.cfg',
    'setup.py',
    'Pipfile',
    'deno.json',
    'deno.jsonc',
    'import_map.json'
  ])('%s', async (file) => {
    const result = await checkPolicy(
      { allowed: [], protected: [...DEFAULT_PROTECTED_PATHS] },
      [changed(file)],
      [noBlobs],
      noRead
    )
    expect(result.protected.map((f) => f.path)).toEqual([file])
  })
})
