// Wrong invocations of the command line, as a new user types them: each is exit 2 with a message
// that names the input and gives the fix, in the tool's words (no parser internals). None reaches
// a Docker engine (DOCKER_HOST points at nothing).
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { execFileSync } from 'node:child_process'
import { jest } from '@jest/globals'
import { main } from '../../src/cli.js'
import { errorMessage, exitCodeFor } from '../../src/errors.js'
import { INPUT } from '../../src/input-names.js'

const PINNED = `busybox@sha256:${'a'.repeat(64)}`
let dir: string
let cwd: string
const env = { ...process.env }

beforeAll(() => {
  cwd = process.cwd()
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-cli-'))
  const git = (...a: string[]): string =>
    execFileSync('git', a, { cwd: dir, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } })
      .toString()
      .trim()
  git('init', '-q')
  fs.mkdirSync(path.join(dir, 'agent'))
  fs.writeFileSync(path.join(dir, 'agent', 'Dockerfile'), `FROM ${PINNED}\n`)
  fs.writeFileSync(path.join(dir, 'Dockerfile.unpinned'), 'FROM busybox:latest\n')
  fs.writeFileSync(path.join(dir, 'task.md'), 'Fix the failing test.\n')
  fs.mkdirSync(path.join(dir, 'docs'))
  fs.writeFileSync(path.join(dir, 'docs', 'notes.txt'), 'notes\n')
  git('add', '.')
  git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'init')
  process.chdir(dir)
  process.env.DOCKER_HOST = `unix://${path.join(dir, 'no-docker.sock')}`
  delete process.env.AIRLOCK_AGENT_API_KEY
  delete process.env.GITHUB_WORKSPACE
})

afterAll(() => {
  process.chdir(cwd)
  process.env = env
  fs.rmSync(dir, { recursive: true, force: true })
})

/** Runs the CLI in-process: exit code, what it printed, and the error message as printed. */
async function airlock(argv: string[]): Promise<{ code: number; stdout: string; message: string }> {
  let stdout = ''
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
    stdout += String(chunk)
    return true
  })
  try {
    const code = await main(argv)
    return { code, stdout, message: '' }
  } catch (error) {
    return { code: exitCodeFor(error), stdout, message: errorMessage(error) }
  } finally {
    spy.mockRestore()
  }
}

const BASE = ['--dockerfile', 'agent/Dockerfile', '--agent-command', 'agent --fix']
const PLAN = ['plan', ...BASE]

/** Text of parsers that must never reach the user. */
const INTERNALS =
  /To specify a positional|is ambiguous|Unknown option '|^error:|commander|ERR_PARSE_ARGS|TypeError/m

const WRONG: [string, string[], RegExp][] = [
  ['flag before any command', ['--frobnicate'], /^--frobnicate: .*write it after one/],
  ['unknown flag of run', ['run', '--frobnicate'], /^--frobnicate: is not a flag of airlock run/],
  ['misspelled flag', ['run', '--tsak', 'x'], /^--tsak: .*Did you mean --task\?/],
  [
    'misspelled flag with =',
    ['plan', '--output-dr=x'],
    /^--output-dr: .*Did you mean --output-dir\?/
  ],
  [
    'flag of another command',
    ['plan', '--quiet'],
    /^--quiet: is a flag of airlock run, not of airlock plan/
  ],
  ['plan flag on run', ['run', '--json'], /^--json: is a flag of airlock plan/],
  ['misspelled command', ['rnu'], /^command: "rnu" is not a command\. Did you mean run\?/],
  ['another misspelled command', ['pln', '--task', 'x'], /^command: "pln" .*Did you mean plan\?/],
  [
    'unknown command',
    ['deploy'],
    /^command: "deploy" is not a command\. Use run, plan, verify, cleanup or init/
  ],
  ['negative memory', [...PLAN, '--memory', '-1g'], /^memory: "-1g" is not a size/],
  ['negative pids', [...PLAN, '--pids-limit', '-5'], /^pids-limit: "-5"/],
  [
    'switch with a bad value',
    [...PLAN, '--compare-base', 'maybe'],
    /^--compare-base: "maybe" is not true or false/
  ],
  [
    'run switch with a bad value',
    ['run', ...BASE, '--fail-on-outcome', 'yes'],
    /^--fail-on-outcome: "yes" is not true or false/
  ],
  ['flag without its value', ['plan', '--task'], /^--task: needs a value \(TEXT\|FILE\)/],
  [
    'flag without its value, then a flag',
    ['plan', '--memory', '--task', 'x'],
    /^--memory: needs a value \(SIZE\) before --task/
  ],
  [
    'stray word',
    ['plan', 'extra'],
    /^arguments: unexpected "extra": .*quote a value that has spaces/
  ],
  ['unquoted task', [...PLAN, '--task', 'fix', 'the', 'bug'], /^arguments: unexpected "the bug"/],
  ['verify without a folder', ['verify'], /^DIR: is required: .*airlock verify airlock-out/],
  [
    'verify with two folders',
    ['verify', 'a', 'b'],
    /^arguments: unexpected "b": airlock verify takes one folder/
  ],
  ['verify of a missing folder', ['verify', 'nowhere'], /^DIR: "nowhere" is not a folder/],
  ['cleanup without a run id', ['cleanup'], /^--run-id: is required: the run to clean up/],
  [
    'cleanup of a path',
    ['cleanup', '--run-id', '../../etc'],
    /^run-id: "\.\.\/\.\.\/etc" may contain only letters/
  ],
  ['cleanup of a path (absolute)', ['cleanup', '--run-id', '/etc'], /^run-id: "\/etc"/],
  [
    'task file misspelled',
    [...PLAN, '--task', 'tsak.md'],
    /^task: "tsak\.md" looks like a file path but there is no such file .*did you mean task\.md\?/
  ],
  [
    'task file above the workspace',
    [...PLAN, '--task', '../x.md'],
    /^task: "\.\.\/x\.md" looks like a file path but is outside the workspace/
  ],
  [
    'task file absolute, outside',
    [...PLAN, '--task', '/tmp/x.md'],
    /^task: "\/tmp\/x\.md" .*outside the workspace/
  ],
  [
    'quickstart task file absent',
    [...PLAN, '--task', '.github/airlock/review-task.md'],
    /^task: ".*review-task\.md" looks like a file path but there is no such file/
  ],
  [
    'task is a folder',
    [...PLAN, '--task', 'docs'],
    /^task: "docs" is a folder, not a regular file/
  ],
  [
    'ref that does not exist',
    [...PLAN, '--ref', 'doesnotexist'],
    /^ref: "doesnotexist" is not a commit in .*give a branch, tag or SHA/
  ],
  [
    'ref that reads as a flag',
    [...PLAN, '--ref=-x'],
    /^ref: "-x" is not a branch, tag or commit SHA/
  ],
  [
    'isolation and runtime both',
    [...PLAN, '--isolation', 'auto', '--runtime', 'runsc'],
    /^isolation\/runtime: give one of them/
  ],
  [
    'isolation not a name',
    [...PLAN, '--isolation', 'max imum'],
    /^isolation: "max imum" is not auto or a runtime name/
  ],
  [
    'runtime not a name',
    [...PLAN, '--runtime', 'run c'],
    /^runtime: "run c" is not a runtime name/
  ],
  [
    'glob with an unclosed bracket',
    [...PLAN, '--allowed-paths', '['],
    /^allowed-paths: "\[" has an unclosed \[/
  ],
  [
    'protected glob with an unclosed brace',
    [...PLAN, '--protected-paths', 'src/{a'],
    /^protected-paths: "src\/\{a" has an unclosed \{/
  ],
  [
    'negated glob',
    [...PLAN, '--allowed-paths', '!src/**'],
    /^allowed-paths: "!src\/\*\*": negated patterns/
  ],
  [
    'unpinned FROM',
    ['plan', '--dockerfile', 'Dockerfile.unpinned', '--agent-command', 'x'],
    /^dockerfile: unpinned base image: busybox:latest \(line 1\).*--allow-unpinned-base/
  ],
  [
    'output folder above',
    [...PLAN, '--output-dir', '../../tmp/evil'],
    /^output-dir: "\.\.\/\.\.\/tmp\/evil" is outside the current folder.*must stay inside the current folder/
  ],
  [
    'output folder absolute, outside',
    [...PLAN, '--output-dir', '/tmp/evil'],
    /^output-dir: "\/tmp\/evil" is outside the current folder/
  ],
  ['repository above', [...PLAN, '--path', '../'], /^path: "\.\.\/" is outside the workspace/],
  [
    'Dockerfile above',
    ['plan', '--dockerfile', '../Dockerfile', '--agent-command', 'x'],
    /^dockerfile: "\.\.\/Dockerfile" is outside the workspace/
  ],
  ['no image at all', ['plan', '--agent-command', 'x'], /^dockerfile\/image: give one of them/],
  ['no agent command', ['plan', '--dockerfile', 'agent/Dockerfile'], /^agent-command: is required/],
  ['unknown network', [...PLAN, '--network', 'open'], /^network: .*"open"/],
  ['cpus zero', [...PLAN, '--cpus', '0'], /^cpus: "0"/],
  [
    'negative timeout',
    [...PLAN, '--timeout-minutes', '-1'],
    /^timeout-minutes: "-1" must be a number of minutes/
  ],
  [
    'unknown preset',
    ['plan', '--agent', 'claude'],
    /^agent: "claude" is not a preset; use one of claude-code/
  ],
  ['image not pinned', ['plan', '--image', 'busybox:latest', '--agent-command', 'x'], /^image: /],
  ['GitHub token passed in', [...PLAN, '--env', 'GITHUB_TOKEN'], /^env: .*GITHUB_TOKEN/],
  [
    'compare-base without tests',
    [...PLAN, '--compare-base'],
    /^compare-base: needs `test-command`/
  ],
  ['unknown cache mode', [...PLAN, '--dependency-cache', 'on'], /^dependency-cache: /],
  ['help of an unknown command', ['help', 'nope'], /^command: "nope" is not a command/]
]

describe('wrong invocations', () => {
  it.each(WRONG)('%s: exit 2, names the input and the fix', async (_name, argv, expected) => {
    const r = await airlock(argv)
    expect(r.message).toMatch(expected)
    expect(r.code).toBe(2)
    expect(r.message).not.toMatch(INTERNALS)
  })

  it('has at least 40 rows', () => {
    expect(WRONG.length).toBeGreaterThanOrEqual(40)
  })
})

describe('what works', () => {
  it('prints the version with --version, -V and after a command', async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(cwd, 'package.json'), 'utf8')) as {
      version: string
    }
    for (const argv of [['--version'], ['-V'], ['run', '--version']]) {
      expect(await airlock(argv)).toEqual({ code: 0, stdout: `${pkg.version}\n`, message: '' })
    }
  })

  it('prints the top help with no arguments and exits 0', async () => {
    const r = await airlock([])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/Commands:\n\s+run .*\n\s+plan /)
    expect(r.stdout).toMatch(/Examples:/)
  })

  it('has a help per command, with groups and examples; help CMD is CMD --help', async () => {
    const run = (await airlock(['run', '--help'])).stdout
    const plan = (await airlock(['plan', '--help'])).stdout
    expect(run).toMatch(/^Usage: airlock run/)
    expect(run).toMatch(/^Network \(docs\/egress\.md\):$/m)
    expect(run).toMatch(/^Examples:$/m)
    expect(run).toMatch(/--quiet/)
    expect(plan).not.toMatch(/--quiet/)
    expect(plan).toMatch(/--json/)
    expect(run).not.toEqual(plan)
    expect((await airlock(['help', 'plan'])).stdout).toEqual(plan)
    expect((await airlock(['-h'])).stdout).toMatch(/^Usage: airlock \[options\] \[command\]/)
    const verify = (await airlock(['verify', '--help'])).stdout
    expect(verify).toMatch(/^Usage: airlock verify DIR/)
  })

  it('documents every input as a flag of run and plan, and says paths stay inside', async () => {
    const run = (await airlock(['run', '--help'])).stdout
    // The inputs of the action's GitHub modes (publish, approve, apply, command) are no flags.
    const githubOnly = new Set<string>([
      INPUT.mode,
      INPUT.githubToken,
      INPUT.publish,
      INPUT.gateContext,
      INPUT.failOutcomes,
      INPUT.allowSelfApproval,
      INPUT.appSlug,
      INPUT.pullRequest,
      INPUT.branch,
      INPUT.base
    ])
    for (const name of Object.values(INPUT).filter((n) => !githubOnly.has(n)))
      expect(run).toContain(`--${name} `)
    expect(await airlock(['run', '--github-token', 'x'])).toMatchObject({ code: 2 })
    expect(run).toMatch(/must stay inside the current folder/)
    expect(run).toMatch(/--workspace-size <SIZE>/)
    expect(run).toMatch(/--dry-run/)
  })

  it('takes flags before the command, and a switch followed by true/false', async () => {
    const r = await airlock(['--compare-base', 'false', 'plan', ...BASE, '--task', 'task.md'])
    expect(r.message).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/task\s+file task\.md/)
  })

  it('plans with --agent without the model key, and says the run needs it', async () => {
    const r = await airlock(['plan', '--agent', 'claude-code', '--task', 'task.md'])
    expect(r.message).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/needs\s+\$AIRLOCK_AGENT_API_KEY at run time/)
    expect(r.stdout).not.toMatch(/not-set-at-plan-time/)
    const json = await airlock(['plan', '--agent', 'claude-code', '--task', 'task.md', '--json'])
    expect(json.stdout).not.toMatch(/not-set-at-plan-time/)
  })

  it('prints a short summary, and the whole plan with --json', async () => {
    const r = await airlock([...PLAN, '--task', 'task.md', '--test-command', 'npm test'])
    expect(r.code).toBe(0)
    expect(r.stdout.split('\n').length).toBeLessThan(30)
    expect(r.stdout).toMatch(/phases\s+agent\s+agent --fix\n\s+tests\s+npm test/)
    const json = await airlock([...PLAN, '--task', 'task.md', '--json'])
    expect(JSON.parse(json.stdout)).toMatchObject({
      repo: { ref: 'HEAD' },
      image: { kind: 'build' }
    })
  })

  it('reads a single word without a slash or extension as the task text', async () => {
    const json = await airlock([...PLAN, '--task', 'refactor', '--json'])
    expect(JSON.parse(json.stdout)).toMatchObject({ task: { source: 'text', bytes: 8 } })
  })
})
