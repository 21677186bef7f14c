import { readRunner } from '../../src/runner.js'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { ConfigurationError } from '../../src/errors.js'
import { DEFAULT_PROTECTED_PATHS } from '../../src/evidence/path-policy.js'
import type Docker from 'dockerode'
import { hashLockfiles, parseUsage, readUsage, runnerFacts } from '../../src/evidence/metadata.js'
import { DockerRuntime } from '../../src/sandbox/docker/index.js'
import { snapshotWorkspace } from '../../src/evidence/snapshot.js'
import { getInputs } from '../../src/inputs.js'
import { prepareWorkspace } from '../../src/workspace/workspace.js'
import { makeRepo } from './helpers.js'
import { LOCAL_EVENT } from '../../src/event.js'
import { testHost } from '../support/host.js'

let root: string
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-meta-'))
})
afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

describe('usage.json', () => {
  test.each([
    [
      '{"model":"m","inputTokens":10,"outputTokens":2,"costUsd":0.5,"extra":true}',
      'ok',
      { model: 'm', inputTokens: 10, outputTokens: 2, costUsd: 0.5 }
    ],
    ['{}', 'ok', {}],
    ['{"inputTokens":-1}', 'malformed', null],
    ['{"inputTokens":1.5}', 'malformed', null],
    ['{"outputTokens":"12"}', 'malformed', null],
    ['{"costUsd":"free"}', 'malformed', null],
    ['[1,2]', 'malformed', null],
    ['not json', 'malformed', null],
    [`{"model":"${'x'.repeat(300)}"}`, 'malformed', null]
  ])('%s → %s', (text, status, usage) => {
    const r = parseUsage(text)
    expect(r.status).toBe(status)
    expect(r.usage).toEqual(usage)
  })

  test('missing, symlinked, FIFO and oversized files are recorded, never followed or blocking', async () => {
    expect((await readUsage(root)).status).toBe('missing')
    fs.symlinkSync('/etc/passwd', path.join(root, 'usage.json'))
    expect(await readUsage(root)).toMatchObject({ status: 'refused', usage: null })
    fs.rmSync(path.join(root, 'usage.json'))
    execFileSync('mkfifo', [path.join(root, 'usage.json')])
    expect(await readUsage(root)).toMatchObject({ status: 'refused', usage: null })
    fs.rmSync(path.join(root, 'usage.json'))
    fs.writeFileSync(path.join(root, 'usage.json'), ' '.repeat(70 * 1024))
    expect(await readUsage(root)).toMatchObject({
      status: 'malformed',
      detail: 'larger than 64 KiB'
    })
  })
})

describe('hashLockfiles', () => {
  test('every lockfile of the result tree, hashed; links not followed', async () => {
    makeRepo(path.join(root, 'src'), {
      'package-lock.json': '{"a":1}\n',
      'web/yarn.lock': 'y\n',
      'svc/go.sum': 'g\n',
      'py/requirements-dev.txt': 'r\n',
      'README.md': 'not a lockfile\n'
    })
    const ws = await prepareWorkspace(path.join(root, 'src'), 'HEAD', path.join(root, 'run'))
    fs.writeFileSync(path.join(ws.dir, 'Cargo.lock'), 'c\n')
    fs.symlinkSync('/etc/passwd', path.join(ws.dir, 'poetry.lock'))
    const snap = await snapshotWorkspace(ws.dir, ws.gitDir)
    const deps = await hashLockfiles(ws.gitDir, snap.tree, ws.dir)
    const h = (s: string): string => createHash('sha256').update(s).digest('hex')
    expect(deps).toEqual([
      { path: 'Cargo.lock', sha256: h('c\n'), bytes: 2 },
      { path: 'package-lock.json', sha256: h('{"a":1}\n'), bytes: 8 },
      { path: 'poetry.lock', sha256: null, bytes: 0, note: 'symlink (not followed)' },
      { path: 'py/requirements-dev.txt', sha256: h('r\n'), bytes: 2 },
      { path: 'svc/go.sum', sha256: h('g\n'), bytes: 2 },
      { path: 'web/yarn.lock', sha256: h('y\n'), bytes: 2 }
    ])
  })

  test("from the snapshot's own list of the tree: the same records in the same order as git's listing", async () => {
    makeRepo(path.join(root, 'order'), {
      'a.b/yarn.lock': '1\n',
      'a/yarn.lock': '2\n',
      'a-b/go.sum': '3\n',
      'a/b/Cargo.lock': '4\n',
      'package-lock.json': '5\n',
      'Z/poetry.lock': '6\n'
    })
    const ws = await prepareWorkspace(path.join(root, 'order'), 'HEAD', path.join(root, 'run2'))
    fs.mkdirSync(path.join(ws.dir, 'a0'))
    fs.writeFileSync(path.join(ws.dir, 'a0', 'go.sum'), '7\n')
    fs.symlinkSync('/etc/passwd', path.join(ws.dir, 'a', 'poetry.lock'))
    const snap = await snapshotWorkspace(ws.dir, ws.gitDir)
    const files = snap.entries.map((e) => ({
      mode: e.mode,
      path: Buffer.from(e.parts.map((p) => p.toString('latin1')).join('/'), 'latin1')
    }))
    const fromGit = await hashLockfiles(ws.gitDir, snap.tree, ws.dir)
    expect(fromGit.map((d) => d.path)).toEqual([
      'Z/poetry.lock',
      'a-b/go.sum',
      'a.b/yarn.lock',
      'a/b/Cargo.lock',
      'a/poetry.lock',
      'a/yarn.lock',
      'a0/go.sum',
      'package-lock.json'
    ])
    // Given in the walk's order (shuffled here): the same answer, without a git process.
    const given = await hashLockfiles('/nonexistent-git-dir', snap.tree, ws.dir, files.reverse())
    expect(given).toEqual(fromGit)
  })
})

/** The engine facts as the Docker backend reads them from a daemon (here a fake one). */
function engine(docker: { version(): Promise<unknown> }) {
  return new DockerRuntime(testHost, docker as unknown as Docker).engineFacts()
}

describe('runnerFacts', () => {
  test('records the daemon version, and survives a daemon that does not answer', async () => {
    const ok = runnerFacts(
      await engine({
        version: async () => ({ Version: '20.10.24', ApiVersion: '1.41', Os: 'linux' })
      }),
      'runsc',
      readRunner({ GITHUB_ACTIONS: 'true', RUNNER_OS: 'Linux', RUNNER_ARCH: 'X64' }).github
    )
    expect(ok).toMatchObject({
      os: os.platform(),
      arch: os.arch(),
      runtime: 'runsc',
      docker: { version: '20.10.24', apiVersion: '1.41', os: 'linux' },
      github: { runnerOs: 'Linux', runnerArch: 'X64', imageOs: null }
    })
    const down = runnerFacts(
      await engine({ version: async () => Promise.reject(new Error('down')) }),
      'runc',
      readRunner({}).github
    )
    expect(down.docker).toEqual({ version: null, apiVersion: null, os: null })
    expect(down.github).toBeNull()
  })
})

describe('policy inputs', () => {
  const ctx = {
    workspace: '',
    environment: {},
    hostUid: 1000,
    event: LOCAL_EVENT,
    hostCpus: 2,
    defaultRunId: 'r'
  }
  const read = (v: Record<string, string>) => (n: string) => v[n]
  beforeEach(() => {
    fs.writeFileSync(path.join(root, 'Dockerfile'), 'FROM scratch\n')
    ctx.workspace = root
  })
  const base = { dockerfile: 'Dockerfile', 'agent-command': 'a' }

  test('defaults, extension and replacement', () => {
    const d = getInputs(read(base), ctx)
    expect(d.protectedPaths).toEqual(DEFAULT_PROTECTED_PATHS)
    expect(d.allowedPaths).toEqual([])
    expect([d.maxChangedFiles, d.maxDiffBytes]).toEqual([2000, 20 * 1024 * 1024])
    const e = getInputs(
      read({
        ...base,
        'protected-paths': '+docs/**\n+Makefile',
        'allowed-paths': 'src/**, tests/**'
      }),
      ctx
    )
    expect(e.protectedPaths.slice(-2)).toEqual(['docs/**', 'Makefile'])
    expect(e.allowedPaths).toEqual(['src/**', 'tests/**'])
    expect(getInputs(read({ ...base, 'protected-paths': 'none' }), ctx).protectedPaths).toEqual([])
  })

  test.each([
    [{ 'protected-paths': '+a\nb' }, 'protected-paths', /mixes/],
    [{ 'allowed-paths': '../x' }, 'allowed-paths', /relative/],
    [{ 'max-changed-files': '0' }, 'max-changed-files', /greater than 0/],
    [{ 'max-diff-bytes': '1.5' }, 'max-diff-bytes', /whole number/]
  ])('%j is refused naming %s', (values, input, message) => {
    let caught: unknown
    try {
      getInputs(read({ ...base, ...values }), ctx)
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(ConfigurationError)
    expect((caught as ConfigurationError).input).toBe(input)
    expect((caught as ConfigurationError).message).toMatch(message)
  })
})
