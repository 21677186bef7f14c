import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import YAML from 'yaml'
import { ConfigurationError, errorMessage } from '../../src/errors.js'
import { getInputs } from '../../src/inputs.js'
import type { InputContext } from '../../src/inputs.js'
import { POLICY_KEYS, parsePolicy, recordFor, withPolicy } from '../../src/policy/policy-file.js'
import { loadPolicy } from '../../src/policy/load.js'
import type { ContentsApi } from '../../src/policy/load.js'
import { git as testGit } from '../support/git.js'
import type { LoadedPolicy } from '../../src/policy/policy-file.js'
import { LOCAL_EVENT, parseEvent } from '../../src/event.js'

describe('parsePolicy', () => {
  test.each<[string, string, Record<string, string>]>([
    ['empty file', '', {}],
    ['comments only', '# nothing yet\n', {}],
    ['version only', 'version: 1\n', {}],
    [
      'sizes and numbers',
      'memory: 512m\ncpus: 1.5\npids-limit: 128\n',
      {
        memory: '512m',
        cpus: '1.5',
        'pids-limit': '128'
      }
    ],
    ['memory as bytes', 'memory: 1073741824\n', { memory: '1073741824' }],
    [
      'numbers as strings',
      "timeout-minutes: '20'\ngrace-seconds: 0\n",
      {
        'timeout-minutes': '20',
        'grace-seconds': '0'
      }
    ],
    [
      'lists as sequences',
      'protected-paths:\n  - .github/**\n  - "*.lock"\n',
      {
        'protected-paths': '.github/**\n*.lock'
      }
    ],
    ['a list as one string', 'allowed-paths: src/**\n', { 'allowed-paths': 'src/**' }],
    [
      'network and hosts',
      'network: allowlist\nallow-hosts: [api.example.com, "*.npmjs.org:443"]\n',
      {
        network: 'allowlist',
        'allow-hosts': 'api.example.com\n*.npmjs.org:443'
      }
    ],
    ['runtime', 'runtime: runsc\n', { runtime: 'runsc' }],
    [
      'approvers',
      'approvers: [octocat, "@octo-org/maintainers"]\nallow-self-approval: false\n',
      {
        approvers: 'octocat\n@octo-org/maintainers',
        'allow-self-approval': 'false'
      }
    ],
    ['booleans', 'allow-unpinned-base: true\n', { 'allow-unpinned-base': 'true' }]
  ])('%s', (_name, text, values) => {
    expect(parsePolicy(text).values).toEqual(values)
  })

  test.each<[string, string, RegExp]>([
    [
      'a typo gets the nearest name',
      'protectd-paths: [a]\n',
      /unknown setting "protectd-paths"; did you mean "protected-paths"\?/
    ],
    ['a typo in a limit', 'memroy: 1g\n', /did you mean "memory"/],
    ['case is not ignored', 'Memory: 1g\n', /unknown setting "Memory"; did you mean "memory"/],
    [
      'far from anything: no guess',
      'colour-scheme: dark\n',
      /unknown setting "colour-scheme" \(valid:/
    ],
    [
      'an input that is not a policy setting',
      'agent-command: rm -rf /\n',
      /unknown setting "agent-command"/
    ],
    ['wrong version', 'version: 2\n', /version: 2 is not supported; use 1/],
    [
      'a boolean as yes (YAML 1.2: a string)',
      'allow-self-approval: yes\n',
      /allow-self-approval: "yes" is not true or false/
    ],
    ['a bad size', 'memory: lots\n', /memory: "lots" is not a size/],
    ['a negative number', 'cpus: -1\n', /cpus: -1 is not a number greater than 0/],
    [
      'a fraction where a whole number is needed',
      'pids-limit: 1.5\n',
      /pids-limit: 1.5 is not a whole number/
    ],
    [
      'an empty string number',
      "timeout-minutes: ''\n",
      /timeout-minutes: "" is not a number greater than 0/
    ],
    ['an unknown network', 'network: host\n', /network: "host" is not one of: none, allowlist/],
    [
      'a runtime that is an option',
      'runtime: --privileged\n',
      /runtime: "--privileged" is not a runtime name/
    ],
    [
      'a path climbing out',
      'allowed-paths: ["../etc"]\n',
      /"..\/etc" is not a glob relative to the repository root/
    ],
    ['an absolute path', 'protected-paths: [/etc/passwd]\n', /is not a glob relative/],
    ['a host with a scheme', 'allow-hosts: ["https://x.com"]\n', /is not a host name/],
    ['a login with spaces', 'approvers: ["a b"]\n', /"a b" is not a GitHub login or @org\/team/],
    [
      'a list of numbers',
      'approvers: [1, 2]\n',
      /approvers: \[1,2\] is not a list of non-empty strings/
    ],
    ['a mapping where a list goes', 'allowed-paths: {a: 1}\n', /is not a list/],
    ['a list at the top', '- memory\n', /must be a mapping/],
    ['duplicate keys', 'memory: 1g\nmemory: 8g\n', /is not valid YAML/],
    ['YAML syntax', 'memory: [1g\n', /is not valid YAML/]
  ])('%s', (_name, text, message) => {
    expect(() => parsePolicy(text)).toThrow(ConfigurationError)
    expect(() => parsePolicy(text)).toThrow(message)
  })

  test('every problem is reported at once, naming the file', () => {
    const fn = (): unknown =>
      parsePolicy('memroy: 1g\ncpus: zero\n', '.github/airlock.yml (at abc)')
    expect(fn).toThrow(
      /^\.github\/airlock\.yml \(at abc\): unknown setting "memroy".*; cpus: "zero"/
    )
  })
})

// The one "did you mean" rule (src/suggest.ts): a third of the length in edits, or a prefix.
test.each<[string, string | undefined]>([
  ['pid-limit', 'pids-limit'],
  ['timeout', 'timeout-minutes'],
  ['runtim', 'runtime'],
  ['allow-self-aproval', 'allow-self-approval'],
  ['approver', 'approvers'],
  ['x', undefined]
])('an unknown setting %s: did you mean %s', (key, expected) => {
  const message = (() => {
    try {
      parsePolicy(`${key}: 1\n`)
      return ''
    } catch (e) {
      return errorMessage(e)
    }
  })()
  expect(message).toContain(`unknown setting "${key}"`)
  if (expected === undefined) expect(message).not.toContain('did you mean')
  else expect(message).toContain(`did you mean "${expected}"?`)
})

describe('withPolicy and getInputs', () => {
  let ws: string
  beforeAll(async () => {
    ws = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'airlock-policy-inputs-'))
    await fs.promises.writeFile(path.join(ws, 'Dockerfile'), 'FROM scratch\n')
  })
  afterAll(() => fs.promises.rm(ws, { recursive: true, force: true }))

  const loaded = (text: string): LoadedPolicy => ({
    policy: parsePolicy(text),
    record: {
      path: '.github/airlock.yml',
      base: 'b'.repeat(40),
      commit: 'b'.repeat(40),
      blobSha: 'c'.repeat(40),
      via: 'git',
      settings: [],
      overridden: []
    }
  })
  const ctx = (policy?: LoadedPolicy): InputContext => ({
    workspace: ws,
    environment: {},
    hostUid: 1000,
    event: LOCAL_EVENT,
    hostCpus: 8,
    defaultRunId: 'r1',
    ...(policy ? { policy } : {})
  })
  const reader =
    (given: Record<string, string>) =>
    (name: string): string | undefined =>
      given[name]
  const base = { dockerfile: 'Dockerfile', 'agent-command': 'true' }

  test.each<[string, Record<string, string>, string, Partial<Record<string, unknown>>]>([
    [
      'policy fills what is not given',
      {},
      'memory: 256m\npids-limit: 64\n',
      {
        memoryBytes: 256 * 1024 ** 2,
        pidsLimit: 64
      }
    ],
    [
      'an explicit input overrides the policy',
      { memory: '1g' },
      'memory: 256m\n',
      {
        memoryBytes: 1024 ** 3
      }
    ],
    ['no policy: the built-in defaults', {}, '', { memoryBytes: 2 * 1024 ** 3, pidsLimit: 512 }],
    ['runtime from the policy', {}, 'runtime: runsc\n', { runtime: 'runsc' }],
    ['timeout from the policy', {}, 'timeout-minutes: 5\n', { timeoutMinutes: 5 }]
  ])('%s', (_name, given, policyText, expected) => {
    const inputs = getInputs(reader({ ...base, ...given }), ctx(loaded(policyText)))
    expect(inputs).toMatchObject(expected)
  })

  test('the record lists the settings and which inputs overrode them', () => {
    const l = loaded('memory: 256m\ncpus: 1\n')
    const inputs = getInputs(reader({ ...base, cpus: '2' }), ctx(l))
    expect(inputs.policy).toMatchObject({
      blobSha: 'c'.repeat(40),
      settings: ['cpus', 'memory'],
      overridden: ['cpus']
    })
    expect(recordFor(l, reader({})).overridden).toEqual([])
  })

  test('a policy value the input rules refuse is a configuration error', () => {
    expect(() => getInputs(reader(base), ctx(loaded('memory: 1k\n')))).toThrow(/memory.*minimum/)
  })

  test('withPolicy never answers for inputs the policy does not hold', () => {
    const read = withPolicy(reader({}), parsePolicy('memory: 1g\n'))
    expect(read('memory')).toBe('1g')
    expect(read('agent-command')).toBeUndefined()
  })

  test('artifact-name: default per run attempt, override validated', () => {
    // The runner's run id and attempt, as the event read them.
    const c = { ...ctx(), event: { ...ctx().event, run: { id: '55', attempt: '3' } } }
    expect(getInputs(reader(base), c).artifactName).toBe('airlock-55-3')
    expect(getInputs(reader(base), ctx()).artifactName).toBe('airlock-r1')
    expect(getInputs(reader({ ...base, 'artifact-name': 'mine' }), c).artifactName).toBe('mine')
    expect(() => getInputs(reader({ ...base, 'artifact-name': 'a/b' }), c)).toThrow(
      /artifact-name: "a\/b" is not a valid artifact name/
    )
  })
})

describe('loadPolicy', () => {
  let repo: string
  let base: string
  let head: string
  let noPolicyCommit: string
  let symlinkCommit: string
  let hugeCommit: string
  const git = (...args: string[]): string => testGit(repo, ...args).trim()
  const write = (rel: string, text: string): void => {
    fs.mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true })
    fs.writeFileSync(path.join(repo, rel), text)
  }

  beforeAll(async () => {
    repo = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'airlock-policy-git-'))
    git('init', '-q', '-b', 'main')
    write('README.md', 'x\n')
    git('add', '-A')
    git('commit', '-q', '-m', 'no policy yet')
    noPolicyCommit = git('rev-parse', 'HEAD')
    write(
      '.github/airlock.yml',
      'memory: 256m\nprotected-paths: [".github/**"]\nallow-self-approval: false\n'
    )
    git('add', '-A')
    git('commit', '-q', '-m', 'strict policy')
    base = git('rev-parse', 'HEAD')
    // The pull request's head loosens the policy; the head is what is checked out on disk.
    write('.github/airlock.yml', 'memory: 16g\nprotected-paths: []\nallow-self-approval: true\n')
    git('commit', '-q', '-am', 'loosen')
    head = git('rev-parse', 'HEAD')
    git('checkout', '-q', '-b', 'sym', noPolicyCommit)
    fs.mkdirSync(path.join(repo, '.github'), { recursive: true })
    fs.symlinkSync('../README.md', path.join(repo, '.github', 'airlock.yml'))
    git('add', '-A')
    git('commit', '-q', '-m', 'policy as a symlink')
    symlinkCommit = git('rev-parse', 'HEAD')
    fs.rmSync(path.join(repo, '.github', 'airlock.yml'))
    write('.github/airlock.yml', '# ' + 'x'.repeat(70 * 1024) + '\n')
    git('add', '-A')
    git('commit', '-q', '-m', 'huge policy')
    hugeCommit = git('rev-parse', 'HEAD')
    git('checkout', '-q', head)
  })
  afterAll(() => fs.promises.rm(repo, { recursive: true, force: true }))

  test('a pull request that loosens the policy runs under the base commit’s policy', async () => {
    expect(fs.readFileSync(path.join(repo, '.github/airlock.yml'), 'utf8')).toContain('16g')
    const l = await loadPolicy({ repoPath: repo, base })
    expect(l.policy.values).toEqual({
      memory: '256m',
      'protected-paths': '.github/**',
      'allow-self-approval': 'false'
    })
    expect(l.record).toMatchObject({
      base,
      commit: base,
      via: 'git',
      blobSha: git('rev-parse', `${base}:.github/airlock.yml`)
    })
  })

  test('a branch name as base resolves to its commit', async () => {
    git('branch', '-f', 'base-branch', base)
    const l = await loadPolicy({ repoPath: repo, base: 'base-branch' })
    expect(l.record).toMatchObject({ base: 'base-branch', commit: base })
  })

  test('no base: no policy', async () => {
    const l = await loadPolicy({ repoPath: repo, base: undefined })
    expect(l.policy.values).toEqual({})
    expect(l.record.base).toBeNull()
  })

  test('a base without the file: no settings, recorded as such', async () => {
    const l = await loadPolicy({ repoPath: repo, base: noPolicyCommit })
    expect(l.policy.values).toEqual({})
    expect(l.record).toMatchObject({ commit: noPolicyCommit, blobSha: null, via: 'git' })
  })

  test.each<[string, () => string, RegExp]>([
    ['a symlink is not read', () => symlinkCommit, /is not a regular file \(mode 120000\)/],
    ['an oversized file', () => hugeCommit, /larger than 65536 bytes/],
    [
      'an option-like base',
      () => '--output=/tmp/x',
      /policy-base: "--output=\/tmp\/x" is not a commit/
    ],
    ['a range', () => 'a..b', /is not a commit SHA or branch name/]
  ])('%s', async (_name, rev, message) => {
    await expect(loadPolicy({ repoPath: repo, base: rev() })).rejects.toThrow(message)
  })

  test('a base that is not in the clone and no API: fails closed with the fix', async () => {
    await expect(loadPolicy({ repoPath: repo, base: 'f'.repeat(40) })).rejects.toThrow(
      /not in the local clone.*fetch-depth/
    )
  })

  test('a base that is not in the clone is read through the contents API', async () => {
    const calls: [string, string][] = []
    const api: ContentsApi = async (p, ref) => {
      calls.push([p, ref])
      return { sha: 'd'.repeat(40), content: Buffer.from('cpus: 1\n') }
    }
    const l = await loadPolicy({ repoPath: repo, base: 'e'.repeat(40), api })
    expect(calls).toEqual([['.github/airlock.yml', 'e'.repeat(40)]])
    expect(l.policy.values).toEqual({ cpus: '1' })
    expect(l.record).toMatchObject({ via: 'api', blobSha: 'd'.repeat(40), commit: 'e'.repeat(40) })
  })

  test('API errors fail closed', async () => {
    const api: ContentsApi = async () => {
      throw new Error('socket hang up')
    }
    await expect(loadPolicy({ repoPath: repo, base: 'e'.repeat(40), api })).rejects.toThrow(
      /cannot read \.github\/airlock\.yml at e+ through the API: socket hang up/
    )
  })
})

test.each<[string, string | undefined]>([
  [JSON.stringify({ pull_request: { base: { sha: 'a'.repeat(40) } } }), 'a'.repeat(40)],
  [JSON.stringify({ pull_request: { base: { sha: 'main' } } }), undefined],
  [JSON.stringify({ issue: { number: 1 } }), undefined],
  ['not json', undefined]
])('the event base sha (%s)', (text, expected) => {
  expect(parseEvent({}, text).pullRequest?.baseSha).toBe(expected)
})

test('no policy setting has an action.yml default (the runner would pass it as if given and it would override the policy)', () => {
  const action = YAML.parse(fs.readFileSync('action.yml', 'utf8')) as {
    inputs: Record<string, { default?: unknown }>
  }
  const shadowed = Object.keys(POLICY_KEYS).filter(
    (k) => action.inputs[k] !== undefined && action.inputs[k].default !== undefined
  )
  expect(shadowed).toEqual([])
})
