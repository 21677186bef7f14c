import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { ConfigurationError } from '../../src/errors.js'
import { getInputs, memory } from '../../src/inputs.js'
import type { InputContext } from '../../src/inputs.js'
import { LOCAL_EVENT } from '../../src/event.js'

const DIGEST = 'a'.repeat(64)
let workspace: string
let ctx: InputContext

beforeAll(() => {
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-inputs-'))
  fs.mkdirSync(path.join(workspace, 'agent'))
  fs.writeFileSync(path.join(workspace, 'agent', 'Dockerfile'), 'FROM scratch\n')
  fs.writeFileSync(path.join(workspace, 'task.md'), 'Fix the bug.\n')
  fs.symlinkSync('/etc', path.join(workspace, 'escape'))
  ctx = {
    workspace,
    environment: { API_KEY: 'k', GITHUB_TOKEN: 'ghs_x', ACTIONS_ID_TOKEN_REQUEST_URL: 'u' },
    hostUid: 0,
    event: LOCAL_EVENT,
    hostCpus: 2,
    defaultRunId: 'run-1'
  }
})

afterAll(() => fs.rmSync(workspace, { recursive: true, force: true }))

const base = { dockerfile: 'agent/Dockerfile', 'agent-command': 'run-agent' }

function read(values: Record<string, string>): (name: string) => string | undefined {
  return (name) => values[name]
}

function errorOf(values: Record<string, string>): ConfigurationError {
  try {
    getInputs(read(values), ctx)
  } catch (error) {
    if (error instanceof ConfigurationError) return error
    throw error
  }
  throw new Error(`no error for ${JSON.stringify(values)}`)
}

describe('getInputs', () => {
  it('applies the defaults', () => {
    const inputs = getInputs(read(base), ctx)
    expect(inputs).toMatchObject({
      path: fs.realpathSync(workspace),
      ref: 'HEAD',
      outputDir: path.join(workspace, 'airlock-out'),
      network: 'none',
      runtime: 'runc',
      timeoutMinutes: 30,
      memoryBytes: 2 * 1024 ** 3,
      cpus: 2,
      pidsLimit: 512,
      user: '1000:1000',
      env: [],
      runId: 'run-1',
      dryRun: false,
      compareBase: false
    })
    expect(inputs.buildContext).toBe(path.join(fs.realpathSync(workspace), 'agent'))
  })

  it('reads a task file inside the workspace, and text otherwise', () => {
    expect(getInputs(read({ ...base, task: 'task.md' }), ctx).task).toEqual({
      text: 'Fix the bug.\n',
      source: 'file',
      file: 'task.md'
    })
    expect(getInputs(read({ ...base, task: 'Add a test' }), ctx).task).toEqual({
      text: 'Add a test',
      source: 'text'
    })
  })

  it('resolves env names to their values and uses a non-root user for the host uid', () => {
    const inputs = getInputs(read({ ...base, env: 'API_KEY' }), { ...ctx, hostUid: 1001 })
    expect(inputs.env).toEqual([{ name: 'API_KEY', value: 'k' }])
    expect(inputs.user).toBe('1001:1001')
  })

  it.each([
    [
      'both dockerfile and image',
      { ...base, image: `x@sha256:${DIGEST}` },
      'dockerfile/image',
      /not both/
    ],
    [
      'neither dockerfile nor image',
      { 'agent-command': 'a' },
      'dockerfile/image',
      /give one of them/
    ],
    ['unpinned image', { image: 'node:20', 'agent-command': 'a' }, 'image', /not pinned by digest/],
    ['image pinned by tag only', { image: 'node@latest', 'agent-command': 'a' }, 'image', /sha256/],
    ['missing agent-command', { dockerfile: 'agent/Dockerfile' }, 'agent-command', /required/],
    [
      'unknown network mode',
      { ...base, network: 'host' },
      'network',
      /not one of: none, allowlist/
    ],
    [
      'allow-hosts without allowlist',
      { ...base, 'allow-hosts': 'api.example.com' },
      'allow-hosts',
      /only applies/
    ],
    ['negative memory', { ...base, memory: '-1g' }, 'memory', /not a size/],
    ['memory below the minimum', { ...base, memory: '1m' }, 'memory', /minimum/],
    ['memory nonsense', { ...base, memory: 'lots' }, 'memory', /not a size/],
    [
      'timeout-minutes of 0',
      { ...base, 'timeout-minutes': '0' },
      'timeout-minutes',
      /greater than 0/
    ],
    [
      'timeout-minutes not a number',
      { ...base, 'timeout-minutes': 'soon' },
      'timeout-minutes',
      /greater than 0/
    ],
    ['negative grace', { ...base, 'grace-seconds': '-1' }, 'grace-seconds', /0 or more/],
    ['zero cpus', { ...base, cpus: '0' }, 'cpus', /greater than 0/],
    ['more cpus than the host', { ...base, cpus: '64' }, 'cpus', /more than this machine has/],
    ['fractional pids-limit', { ...base, 'pids-limit': '1.5' }, 'pids-limit', /whole number/],
    ['path outside the workspace', { ...base, path: '../..' }, 'path', /outside the workspace/],
    ['path through a symlink out', { ...base, path: 'escape' }, 'path', /symlink/],
    [
      'dockerfile that does not exist',
      { ...base, dockerfile: 'nope/Dockerfile' },
      'dockerfile',
      /does not exist/
    ],
    [
      'dockerfile outside the workspace',
      { ...base, dockerfile: '/etc/passwd' },
      'dockerfile',
      /outside/
    ],
    [
      'build-context with image',
      { image: `x@sha256:${DIGEST}`, 'agent-command': 'a', 'build-context': '.' },
      'build-context',
      /only applies/
    ],
    ['root user', { ...base, user: '0' }, 'user', /never runs as root/],
    ['root user with group', { ...base, user: '0:1000' }, 'user', /never runs as root/],
    ['named user', { ...base, user: 'node' }, 'user', /numeric/],
    [
      'runtime with shell characters',
      { ...base, runtime: 'runc;rm' },
      'runtime',
      /not a runtime name/
    ],
    ['GITHUB_TOKEN in env', { ...base, env: 'GITHUB_TOKEN' }, 'env', /can never enter the sandbox/],
    [
      'OIDC request variables in env',
      { ...base, env: 'ACTIONS_ID_TOKEN_REQUEST_URL' },
      'env',
      /can never enter/
    ],
    ['unset env variable', { ...base, env: 'NOT_SET_ANYWHERE' }, 'env', /not set/],
    ['bad env name', { ...base, env: 'A-B' }, 'env', /not a variable name/],
    ['bad build arg', { ...base, 'build-args': 'novalue' }, 'build-args', /KEY=VALUE/],
    [
      'test report outside the repo',
      { ...base, 'test-reports': '../x.xml' },
      'test-reports',
      /relative to the repository/
    ],
    [
      'absolute test report',
      { ...base, 'test-reports': '/tmp/x.xml' },
      'test-reports',
      /relative to the repository/
    ],
    ['boolean that is not one', { ...base, 'dry-run': 'yes' }, 'dry-run', /true or false/],
    [
      'compare-base without tests',
      { ...base, 'compare-base': 'true' },
      'compare-base',
      /test-command/
    ],
    ['ref that looks like an option', { ...base, ref: '--output=/tmp/x' }, 'ref', /not a branch/],
    ['ref range', { ...base, ref: 'main..dev' }, 'ref', /not a branch/],
    ['run id with slashes', { ...base, 'run-id': '../x' }, 'run-id', /letters, digits/]
  ])('%s is a ConfigurationError naming the input', (_title, values, input, message) => {
    const error = errorOf(values as Record<string, string>)
    expect(error.input).toBe(input)
    expect(error.message).toMatch(message)
    expect(error.message.startsWith(`${input}: `)).toBe(true)
  })
})

describe('memory', () => {
  it.each([
    ['512m', 512 * 1024 ** 2],
    ['2g', 2 * 1024 ** 3],
    ['1.5G', 1.5 * 1024 ** 3],
    ['8192k', 8 * 1024 ** 2],
    ['8388608', 8388608],
    ['64MiB', 64 * 1024 ** 2]
  ])('%s is %d bytes', (raw, bytes) => {
    expect(memory(raw)).toBe(bytes)
  })
})
