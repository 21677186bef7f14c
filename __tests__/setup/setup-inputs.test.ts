import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { ConfigurationError } from '../../src/errors.js'
import { getInputs } from '../../src/inputs.js'
import type { InputContext } from '../../src/inputs.js'
import { planRun } from '../../src/plan.js'
import { parsePolicy } from '../../src/policy/policy-file.js'
import { lockfileFindings } from '../../src/evidence/lockfiles.js'
import type { SetupReport } from '../../src/report/report.js'
import { LOCAL_EVENT } from '../../src/event.js'

const PROXY = `sha256:${'b'.repeat(64)}`
let workspace: string
let ctx: InputContext

beforeAll(() => {
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-setup-inputs-'))
  fs.writeFileSync(path.join(workspace, 'Dockerfile'), 'FROM scratch\n')
  ctx = {
    workspace,
    environment: {},
    hostUid: 1000,
    event: LOCAL_EVENT,
    hostCpus: 2,
    defaultRunId: 'run-1'
  }
})
afterAll(() => fs.rmSync(workspace, { recursive: true, force: true }))

const base = { dockerfile: 'Dockerfile', 'agent-command': 'agent', 'test-command': 'npm test' }
const inputs = (v: Record<string, string>) => getInputs((n) => v[n], ctx)

describe('setup-command and setup-allow-hosts', () => {
  test('presets expand to registry hosts; the phase runs first, then the baseline', () => {
    const i = inputs({
      ...base,
      'compare-base': 'true',
      'setup-command': 'npm ci',
      'setup-allow-hosts': 'npm, pypi\nregistry.test:4873',
      'proxy-image': PROXY,
      'host-map': 'registry.test=172.30.0.5'
    })
    expect(i.setup?.presets).toEqual(['npm', 'pypi'])
    expect(i.setup?.allow.map((r) => r.host)).toEqual([
      'registry.npmjs.org',
      'registry.yarnpkg.com',
      'pypi.org',
      'files.pythonhosted.org',
      'registry.test'
    ])
    expect(i.egress).toBeUndefined()
    const plan = planRun(i)
    expect(plan.phases.map((p) => [p.name, p.network])).toEqual([
      ['setup', 'allowlist'],
      ['baseline', 'none'],
      ['agent', 'none'],
      ['tests', 'none']
    ])
    expect(plan.setup?.proxy).toEqual({
      image: PROXY,
      hostMap: [{ host: 'registry.test', address: '172.30.0.5' }],
      network: null
    })
    expect(plan.sandbox.network).toBe('none')
  })

  test('without allowed hosts the install runs with no network and needs no proxy', () => {
    const plan = planRun(inputs({ ...base, 'setup-command': 'make deps' }))
    expect(plan.phases[0]).toMatchObject({ name: 'setup', network: 'none' })
    expect(plan.setup).toEqual({ presets: [], allowHosts: [], proxy: null })
  })

  test.each([
    [{ 'setup-allow-hosts': 'npm' }, 'setup-allow-hosts', /only applies with `setup-command`/],
    [
      { 'setup-command': 'npm ci', 'setup-allow-hosts': 'npm' },
      'proxy-image',
      /is required with `setup-allow-hosts`/
    ],
    [
      { 'setup-command': 'npm ci', 'setup-allow-hosts': 'npm', 'proxy-image': 'node:20' },
      'proxy-image',
      /is not pinned/
    ],
    [
      { 'setup-command': 'npm ci', 'setup-allow-hosts': 'npmjs' },
      'setup-allow-hosts',
      /"npmjs" is not a preset \(npm, pypi, crates, go, debian\)/
    ],
    [
      { 'setup-command': 'npm ci', 'setup-allow-hosts': '10.0.0.1' },
      'setup-allow-hosts',
      /IP addresses are never allowed/
    ],
    [
      {
        'setup-command': 'npm ci',
        'setup-allow-hosts': 'npm',
        'proxy-image': PROXY,
        'host-map': 'evil.test=172.30.0.9'
      },
      'host-map',
      /not in setup-allow-hosts/
    ]
  ])('%j is refused, naming %s', (extra, input, message) => {
    let error: unknown
    try {
      inputs({ ...base, ...extra })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigurationError)
    expect((error as ConfigurationError).input).toBe(input)
    expect((error as Error).message).toMatch(message)
  })

  test('runtime runsc with setup-allow-hosts is left to the daemon check at run time', () => {
    const i = inputs({
      ...base,
      'setup-command': 'npm ci',
      'setup-allow-hosts': 'npm',
      'proxy-image': PROXY,
      runtime: 'runsc'
    })
    expect(i.runtime).toBe('runsc')
    expect(i.setup?.allow.length).toBeGreaterThan(0)
  })

  test('the policy file may set them', () => {
    const policy = parsePolicy('setup-command: npm ci\nsetup-allow-hosts: [npm]\n')
    expect(policy.values).toEqual({ 'setup-command': 'npm ci', 'setup-allow-hosts': 'npm' })
    expect(() => parsePolicy('setup-command: ""\n')).toThrow(
      /setup-command: "" is not a shell command/
    )
  })
})

describe('lockfile hashes across the install and the agent', () => {
  const report = (): SetupReport => ({
    command: 'npm ci',
    phase: {} as SetupReport['phase'],
    presets: [],
    allowHosts: [],
    egress: null,
    lockfiles: [
      {
        path: 'package-lock.json',
        beforeSetup: 'a'.repeat(64),
        afterSetup: 'a'.repeat(64),
        afterAgent: null
      }
    ],
    changedFiles: [],
    changedTotal: 0
  })

  test('unchanged by the agent: nothing flagged', () => {
    const r = report()
    const { lockfiles, findings } = lockfileFindings(r, [
      { path: 'package-lock.json', sha256: 'a'.repeat(64), bytes: 1 }
    ])
    expect(findings).toEqual([])
    expect(lockfiles[0].afterAgent).toBe('a'.repeat(64))
  })

  test('changed, added or deleted by the agent: flagged; what the install changed is named', () => {
    const r = report()
    r.changedFiles = ['package.json']
    r.changedTotal = 1
    const { findings } = lockfileFindings(r, [
      { path: 'package-lock.json', sha256: 'c'.repeat(64), bytes: 1 },
      { path: 'web/yarn.lock', sha256: 'd'.repeat(64), bytes: 1 }
    ])
    expect(findings.map((f) => [f.rule, f.path])).toEqual([
      ['lockfile-changed', 'package-lock.json'],
      ['lockfile-changed', 'web/yarn.lock'],
      ['setup-changed', 'package.json']
    ])
  })
})
