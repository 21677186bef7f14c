import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { execFileSync } from 'node:child_process'
import { parse } from 'yaml'
import { ConfigurationError } from '../../src/errors.js'
import { getGitHubInputs } from '../../src/github/modes/inputs.js'
import { MAX_TIMER_MS, boundedReader, checkShape } from '../../src/input-bounds.js'
import { bool, getInputs } from '../../src/inputs.js'
import { NO_POLICY, parsePolicy } from '../../src/policy/policy-file.js'
import { policyForRun } from '../../src/policy/load.js'
import type { InputContext } from '../../src/inputs.js'
import { planRun } from '../../src/plan.js'
import { withPreset } from '../../src/presets/presets.js'
import { LOCAL_EVENT } from '../../src/event.js'

let workspace: string
let ctx: InputContext

beforeAll(() => {
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-bounds-'))
  fs.mkdirSync(path.join(workspace, 'agent'))
  fs.writeFileSync(path.join(workspace, 'agent', 'Dockerfile'), 'FROM scratch\n')
  fs.writeFileSync(path.join(workspace, 'task.md'), 'Fix the bug.\n')
  fs.writeFileSync(path.join(workspace, 'a-file'), 'not a folder\n')
  fs.symlinkSync('task.md', path.join(workspace, 'task-link.md'))
  fs.symlinkSync('/etc', path.join(workspace, 'etc-link'))
  execFileSync('mkfifo', [path.join(workspace, 'task.fifo')])
  fs.mkdirSync(path.join(workspace, 'a-folder'))
  ctx = {
    workspace,
    environment: { API_KEY: 'k' },
    hostUid: 1000,
    event: LOCAL_EVENT,
    hostCpus: 2,
    defaultRunId: 'run-1'
  }
})

afterAll(() => fs.rmSync(workspace, { recursive: true, force: true }))

const base = { dockerfile: 'agent/Dockerfile', 'agent-command': 'run-agent' }
const allowlist = {
  ...base,
  network: 'allowlist',
  'allow-hosts': 'api.example.com',
  'proxy-image': `node@sha256:${'b'.repeat(64)}`
}

/** The inputs read by the GitHub modes (publish, approve, apply) rather than by the run. */
const GITHUB_MODE_INPUTS = new Set([
  'github-token',
  'app-slug',
  'publish',
  'gate-context',
  'fail-outcomes',
  'allow-self-approval',
  'pull-request',
  'branch',
  'base'
])
/** Inputs that only apply with `network: allowlist`. */
const ALLOWLIST_INPUTS = new Set([
  'allow-hosts',
  'host-map',
  'credentials',
  'upstream-ca',
  'proxy-image',
  'proxy-network'
])

async function errorOf(fn: () => unknown): Promise<ConfigurationError> {
  try {
    await fn()
  } catch (error) {
    if (error instanceof ConfigurationError) return error
    throw error
  }
  throw new Error('no ConfigurationError')
}

const presetContext = { actionRoot: process.cwd(), environment: {}, forkPullRequest: false }

/** Reads the inputs the way the input's mode does; throws what that mode would throw. */
function readAs(input: string, value: string): unknown {
  if (input === 'mode') return boundedReader(() => value)('mode')
  // The preset is resolved by runInputs (src/presets/run-inputs.ts) from the same bounded reader.
  if (input === 'agent')
    return withPreset(
      boundedReader(() => value),
      presetContext
    ).read('agent')
  // Read by the run step as `bool('publish', readInput('publish'), true)` with a bounded reader.
  if (input === 'publish') return bool('publish', boundedReader(() => value)('publish'), true)
  if (input === 'policy-base') {
    return policyForRun({
      read: (n) => (n === 'policy-base' ? value : undefined),
      workspace
    })
  }
  if (GITHUB_MODE_INPUTS.has(input)) {
    const values: Record<string, string> = { 'github-token': 't', [input]: value }
    return getGitHubInputs((n) => values[n], workspace, { tokenRequired: true })
  }
  const values: Record<string, string> = {
    ...(ALLOWLIST_INPUTS.has(input) ? allowlist : base),
    [input]: value
  }
  return planRun(getInputs((n) => values[n], ctx))
}

const actionInputs = Object.keys(
  (
    parse(fs.readFileSync(path.join(process.cwd(), 'action.yml'), 'utf8')) as {
      inputs: Record<string, unknown>
    }
  ).inputs
)

/** Hostile values every input refuses, whatever it means. */
const GENERIC: [string, (input: string) => string][] = [
  ['a NUL byte', () => 'abc\0def'],
  ['an escape sequence', () => 'abc\u001b[2Jdef'],
  ['a value far too long', (input) => 'x'.repeat(input === 'task' ? 1024 * 1024 + 1 : 70_000)]
]

/** Values specific to one input, each refused with a ConfigurationError naming it. */
const SPECIFIC: Record<string, string[]> = {
  'timeout-minutes': ['35792', '1e9', 'Infinity', '-1', '0', '1e-9', 'NaN', '0x10'],
  'grace-seconds': ['2147484', '1e12', '-0.5', 'Infinity'],
  'output-dir': ['a-file', 'a-file/sub'],
  task: ['task-link.md', 'task.fifo', 'a-folder', 'etc-link/passwd'],
  memory: ['99999999999999999999g', '-2g', '2t'],
  cpus: ['1e400', '-1', '3'],
  'pids-limit': ['1e300', '9007199254740993', '0'],
  'workspace-size': [
    '0',
    '-1g',
    '8m',
    '1e9',
    '4x',
    '4 g g',
    'NaN',
    '16385g',
    '99999999999999999999g'
  ],
  'max-log-bytes': ['1e300', '0', '1.5'],
  'max-changed-files': ['1e300', '0'],
  'max-diff-bytes': ['1e300', '-5'],
  'run-id': ['../../etc', 'a b', 'x'.repeat(65)],
  path: ['../../', 'etc-link'],
  ref: ['--upload-pack=x', 'a..b'],
  dockerfile: ['/etc/passwd', 'etc-link/passwd'],
  image: ['node:latest', 'x@sha256:short'],
  runtime: ['runc --privileged', '../runc'],
  user: ['0', 'root', '0:0'],
  env: ['GITHUB_TOKEN', 'ACTIONS_RUNTIME_TOKEN', 'A-B'],
  'pull-request': ['1e300', '-1', '1.5'],
  branch: ['-x', '../x', 'a b'],
  base: ['-x', 'refs/../../x'],
  network: ['host', 'bridge'],
  'artifact-name': ['a/b', 'a:b'],
  'fail-outcomes': ['success-ish'],
  'gate-context': ['x'.repeat(101)],
  'test-reports': ['/etc/passwd', '../x'],
  'build-args': ['=x', 'A B=1'],
  'dry-run': ['yes'],
  'compare-base': ['1'],
  'allow-unpinned-base': ['on'],
  'allow-self-approval': ['sure'],
  'policy-base': ['--output=/tmp/x'],
  publish: ['maybe']
}

/** Single-line inputs: a line break smuggles a second value in. */
const SINGLE_LINE = actionInputs.filter(
  (i) =>
    ![
      'build-args',
      'test-reports',
      'task',
      'allow-hosts',
      'host-map',
      'credentials',
      'upstream-ca',
      'env',
      'allowed-paths',
      'protected-paths',
      'agent-command',
      'test-command',
      'fail-outcomes',
      'setup-command',
      'setup-allow-hosts',
      'services'
    ].includes(i)
)

const cases: [string, string, string][] = []
for (const input of actionInputs) {
  for (const [what, make] of GENERIC) {
    // The task may hold any text; NUL and size are still refused.
    if (input === 'task' && what === 'an escape sequence') continue
    cases.push([input, what, make(input)])
  }
  if (SINGLE_LINE.includes(input)) cases.push([input, 'a line break', 'ok\nsecond'])
  for (const v of SPECIFIC[input] ?? []) cases.push([input, JSON.stringify(v), v])
}

describe('every input of action.yml against hostile values', () => {
  it('the table covers every input of action.yml', () => {
    expect(actionInputs.length).toBeGreaterThan(40)
    for (const input of actionInputs) {
      expect(cases.filter((c) => c[0] === input).length).toBeGreaterThanOrEqual(3)
    }
  })

  it.each(cases)('%s: %s is a ConfigurationError naming it', async (input, _what, value) => {
    const error = await errorOf(() => readAs(input, value))
    expect(error.input).toContain(input)
    expect(error.message.startsWith(`${error.input}: `)).toBe(true)
  })
})

describe('timer bounds', () => {
  it.each([
    ['35791', 35791 * 60_000],
    ['0.5', 30_000],
    ['30', 1_800_000]
  ])('timeout-minutes %s plans a deadline a timer can wait', (raw, ms) => {
    const plan = planRun(getInputs((n) => ({ ...base, 'timeout-minutes': raw })[n], ctx))
    expect(plan.phases[0].timeoutMs).toBe(ms)
    expect(plan.phases[0].timeoutMs).toBeLessThanOrEqual(MAX_TIMER_MS)
  })

  it('names the largest value accepted', async () => {
    const e = await errorOf(() =>
      getInputs((n) => ({ ...base, 'timeout-minutes': '40000' })[n], ctx)
    )
    expect(e.message).toMatch(/at most 35791/)
    const g = await errorOf(() =>
      getInputs((n) => ({ ...base, 'grace-seconds': '3000000' })[n], ctx)
    )
    expect(g.message).toMatch(/at most 2147483/)
  })

  it('accepts a grace of 0 and the largest grace', () => {
    const plan = planRun(getInputs((n) => ({ ...base, 'grace-seconds': '2147483' })[n], ctx))
    expect(plan.phases[0].graceMs).toBe(2_147_483_000)
    expect(getInputs((n) => ({ ...base, 'grace-seconds': '0' })[n], ctx).graceSeconds).toBe(0)
  })
})

describe('workspace-size', () => {
  const read = (v?: string): ReturnType<typeof getInputs>['workspace'] =>
    getInputs((n) => ({ ...base, ...(v !== undefined ? { 'workspace-size': v } : {}) })[n], ctx)
      .workspace

  it.each([
    [undefined, 4 * 1024 ** 3, false],
    ['64m', 64 * 1024 ** 2, true],
    ['8g', 8 * 1024 ** 3, true],
    ['8GiB', 8 * 1024 ** 3, true],
    ['16384g', 16 * 1024 ** 4, true]
  ])('%s is %d bytes, required: %s', (raw, bytes, required) => {
    expect(read(raw)).toEqual({ sizeBytes: bytes, required })
  })

  it.each([
    ['8m', /too small/],
    ['16385g', /too large/],
    ['99999999999999999999g', /too large/],
    ['4x', /not a size/],
    ['-1g', /not a size/]
  ])('%s names workspace-size and the accepted range', async (raw, message) => {
    const e = await errorOf(() => read(raw))
    expect(e.input).toBe('workspace-size')
    expect(e.message).toMatch(message)
    expect(e.message).toMatch(/between 16m and 16384g/)
  })

  it('the policy file may set it, and an explicit value there is required', () => {
    const inputs = getInputs((n) => base[n as keyof typeof base], {
      ...ctx,
      policy: { ...NO_POLICY, policy: parsePolicy('workspace-size: 1g\n', 'policy') }
    })
    expect(inputs.workspace).toEqual({ sizeBytes: 1024 ** 3, required: true })
  })
})

describe('output-dir and task', () => {
  it('output-dir that is a file names the input and the fix', async () => {
    const e = await errorOf(() => getInputs((n) => ({ ...base, 'output-dir': 'a-file' })[n], ctx))
    expect(e.input).toBe('output-dir')
    expect(e.message).toMatch(/not a folder/)
  })

  it('a new output-dir under an existing folder is accepted', () => {
    const inputs = getInputs((n) => ({ ...base, 'output-dir': 'a-folder/new/out' })[n], ctx)
    expect(inputs.outputDir).toBe(path.join(workspace, 'a-folder/new/out'))
  })

  it.each([
    ['task-link.md', /a symlink/],
    ['task.fifo', /a FIFO/],
    ['a-folder', /a folder/],
    ['etc-link/passwd', /outside the workspace/]
  ])('task %s is refused, never read as text or followed', async (task, message) => {
    const e = await errorOf(() => getInputs((n) => ({ ...base, task })[n], ctx))
    expect(e.input).toBe('task')
    expect(e.message).toMatch(message)
    expect(e.message).toMatch(/regular file/)
  })

  it('a device named through a path inside the workspace is refused', async () => {
    const devLink = path.join(workspace, 'dev')
    if (!fs.existsSync(devLink)) fs.symlinkSync('/dev', devLink)
    const e = await errorOf(() => getInputs((n) => ({ ...base, task: 'dev/null' })[n], ctx))
    expect(e.input).toBe('task')
  })

  it('a regular task file is read; text stays text', () => {
    expect(getInputs((n) => ({ ...base, task: 'task.md' })[n], ctx).task).toEqual({
      text: 'Fix the bug.\n',
      source: 'file',
      file: 'task.md'
    })
    expect(getInputs((n) => ({ ...base, task: 'fix the \u001b bug' })[n], ctx).task.source).toBe(
      'text'
    )
  })
})

describe('checkShape', () => {
  it('lets lists and commands span lines, and nothing else', () => {
    expect(() => checkShape('allow-hosts', 'a.example.com\nb.example.com')).not.toThrow()
    expect(() => checkShape('agent-command', 'set -e\nrun\n')).not.toThrow()
    expect(() => checkShape('model', 'm\n')).not.toThrow()
    expect(() => checkShape('model', 'm\nx')).toThrow(/single line/)
  })
})
