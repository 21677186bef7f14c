// Locally (the CLI, no event) `isolation: auto` without `--policy-base` compares the head with the
// repository's default branch: origin/HEAD, else a local main or master; or says why it cannot.
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { jest } from '@jest/globals'
import { main } from '../../src/cli.js'
import { defaultBranchBase } from '../../src/pipeline/isolation-facts.js'
import { errorMessage } from '../../src/errors.js'

const ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.com'
}
let root: string
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-default-branch-'))
})
afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: ENV }).toString().trim()
}

/** A repository whose first commit is on `branch`, then `feature` with `change` committed. */
function repo(
  branch: string,
  change: Record<string, string>,
  dir = path.join(root, 'repo')
): string {
  fs.mkdirSync(dir, { recursive: true })
  git(dir, 'init', '-q', '-b', branch)
  fs.writeFileSync(path.join(dir, 'README.md'), 'x\n')
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"a"}\n')
  git(dir, 'add', '-A')
  git(dir, 'commit', '-qm', 'base')
  git(dir, 'checkout', '-qb', 'feature')
  for (const [f, text] of Object.entries(change)) fs.writeFileSync(path.join(dir, f), text)
  git(dir, 'add', '-A')
  git(dir, 'commit', '-qm', 'change')
  return dir
}

const head = (dir: string): string => git(dir, 'rev-parse', 'HEAD')

describe('defaultBranchBase', () => {
  test('a local main: the merge base with it', async () => {
    const dir = repo('main', { 'README.md': 'y\n' })
    git(dir, 'checkout', '-q', 'main')
    fs.writeFileSync(path.join(dir, 'later.txt'), 'later\n')
    git(dir, 'add', '-A')
    git(dir, 'commit', '-qm', 'main moved on')
    expect(await defaultBranchBase(dir, git(dir, 'rev-parse', 'feature'))).toEqual({
      commit: git(dir, 'rev-parse', 'main~1'),
      against: 'main'
    })
  })

  test('a local master when there is no main', async () => {
    const dir = repo('master', { 'README.md': 'y\n' })
    expect(await defaultBranchBase(dir, head(dir))).toEqual({
      commit: git(dir, 'rev-parse', 'master'),
      against: 'master'
    })
  })

  test("a clone: the remote's default branch (origin/HEAD) wins over a local main", async () => {
    const upstream = repo('trunk', { 'x.txt': '1\n' }, path.join(root, 'upstream'))
    git(upstream, 'checkout', '-q', 'trunk')
    const dir = path.join(root, 'clone')
    git(root, 'clone', '-q', upstream, dir)
    git(dir, 'checkout', '-qb', 'main')
    fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"b"}\n')
    git(dir, 'commit', '-qam', 'local main')
    git(dir, 'checkout', '-qb', 'work')
    expect(await defaultBranchBase(dir, head(dir))).toEqual({
      commit: git(dir, 'rev-parse', 'origin/trunk'),
      against: 'origin/trunk (origin/HEAD)'
    })
  })

  test('no default branch to be found: says why', async () => {
    const dir = repo('develop', { 'README.md': 'y\n' })
    expect(await defaultBranchBase(dir, head(dir))).toEqual({
      why: 'no --policy-base given, and the repository has no refs/remotes/origin/HEAD and no local main or master branch; give --policy-base BRANCH'
    })
  })

  test('no common history with the default branch: says why', async () => {
    const dir = repo('main', { 'README.md': 'y\n' })
    git(dir, 'checkout', '-q', '--orphan', 'other')
    git(dir, 'commit', '-qm', 'unrelated')
    expect(await defaultBranchBase(dir, head(dir))).toEqual({
      why: `${head(dir)} has no common history with main; give --policy-base BRANCH`
    })
  })
})

describe('airlock plan --isolation auto, without --policy-base', () => {
  let cwd: string
  const env = { ...process.env }
  beforeEach(() => {
    cwd = process.cwd()
    // No engine: the plan says what auto would choose and that the engine decides the rest.
    process.env.DOCKER_HOST = `unix://${path.join(root, 'no-docker.sock')}`
    delete process.env.GITHUB_WORKSPACE
    delete process.env.GITHUB_ACTIONS
  })
  afterEach(() => {
    process.chdir(cwd)
    process.env = { ...env }
  })

  async function plan(dir: string): Promise<string> {
    fs.writeFileSync(path.join(dir, 'Dockerfile'), `FROM busybox@sha256:${'a'.repeat(64)}\n`)
    process.chdir(dir)
    let stdout = ''
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
      stdout += String(chunk)
      return true
    })
    try {
      const code = await main([
        'plan',
        '--dockerfile',
        'Dockerfile',
        '--agent-command',
        'true',
        '--isolation',
        'auto'
      ])
      expect(code).toBe(0)
    } catch (error) {
      throw new Error(errorMessage(error))
    } finally {
      spy.mockRestore()
    }
    return stdout
  }

  test('a feature branch that changes no dependency: runc, compared with main', async () => {
    const out = await plan(repo('main', { 'README.md': 'y\n' }))
    expect(out).toMatch(
      /runc: same-repository change without network, credentials or dependency changes \(compared with main\)/
    )
  })

  test('a feature branch that changes package.json: runsc, naming the file', async () => {
    const out = await plan(
      repo('main', { 'package.json': '{"name":"a","dependencies":{"x":"1"}}\n' })
    )
    expect(out).toMatch(
      /runsc: the change touches dependencies or install scripts against main \(package\.json\)/
    )
  })

  test('no default branch: runsc, and the plan says exactly why', async () => {
    const out = await plan(repo('develop', { 'README.md': 'y\n' }))
    expect(out).toMatch(
      /runsc: no base to compare with \(no --policy-base given, and the repository has no refs\/remotes\/origin\/HEAD and no local main or master branch; give --policy-base BRANCH\): dependency changes unknown/
    )
  })
})
