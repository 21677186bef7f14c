import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { execFileSync } from 'node:child_process'
import { getInputs } from '../../src/inputs.js'
import { planRun } from '../../src/plan.js'
import { ConfigurationError } from '../../src/errors.js'
import {
  AGENT_KEY_ENV,
  DEFAULT_NODE_IMAGE,
  DEFAULT_PROXY_IMAGE,
  PRESETS,
  withPreset
} from '../../src/presets/presets.js'
import { runRef } from '../../src/workspace/event-ref.js'
import { parseEvent } from '../../src/event.js'
import { baseImages } from '../../src/sandbox/dockerfile.js'
import { ROOT } from '../support/cli.js'
import { LOCAL_EVENT } from '../../src/event.js'
import { parsePolicy } from '../../src/policy/policy-file.js'
import type { LoadedPolicy } from '../../src/policy/policy-file.js'

const KEY = { [AGENT_KEY_ENV]: 'sk-test' }
const reader =
  (raw: Record<string, string>) =>
  (n: string): string | undefined =>
    raw[n]

function presetInputs(raw: Record<string, string>, environment: NodeJS.ProcessEnv = KEY) {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-presets-unit-'))
  const p = withPreset(reader(raw), { actionRoot: ROOT, environment })
  return getInputs(p.read, {
    workspace: ws,
    environment,
    hostUid: 1000,
    event: LOCAL_EVENT,
    hostCpus: 4,
    defaultRunId: 'unit-1',
    ...(p.preset
      ? {
          preset: {
            name: p.preset.name,
            ...(p.dockerfile !== undefined ? { dockerfile: p.dockerfile } : {})
          }
        }
      : {})
  })
}

describe.each(Object.keys(PRESETS))('preset %s', (name) => {
  const preset = PRESETS[name]

  test('fills image, command, allowlist, credential route and the default proxy image', () => {
    const inputs = presetInputs({ agent: name, task: 'do it' })
    expect(inputs.dockerfile).toBe(path.join(ROOT, preset.imageDir, 'Dockerfile'))
    expect(inputs.agentCommand).toBe(preset.command(undefined))
    expect(inputs.network).toBe('allowlist')
    expect(inputs.egress?.proxyImage).toBe(DEFAULT_PROXY_IMAGE)
    expect(inputs.egress?.credentials).toEqual([
      expect.objectContaining({ secretEnv: AGENT_KEY_ENV, secret: 'sk-test' })
    ])
    expect(inputs.env).toEqual([])
    expect(planRun(inputs).preset).toBe(name)
  })

  test('every field given explicitly wins over the preset', () => {
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-presets-unit-'))
    fs.writeFileSync(path.join(ws, 'Dockerfile'), 'FROM scratch\n')
    const p = withPreset(
      reader({
        agent: name,
        dockerfile: 'Dockerfile',
        'agent-command': 'my-agent',
        credentials: 'MINE=https://models.example.com|MY_KEY|bearer',
        'allow-hosts': 'registry.npmjs.org',
        'proxy-image': `proxy@sha256:${'a'.repeat(64)}`
      }),
      { actionRoot: ROOT, environment: { MY_KEY: 'k' } }
    )
    expect(p.read('dockerfile')).toBe('Dockerfile')
    expect(p.read('agent-command')).toBe('my-agent')
    expect(p.read('credentials')).toBe('MINE=https://models.example.com|MY_KEY|bearer')
    expect(p.read('allow-hosts')).toBe('registry.npmjs.org')
    expect(p.read('proxy-image')).toBe(`proxy@sha256:${'a'.repeat(64)}`)
    expect(p.dockerfile).toBeUndefined()
  })

  test('model reaches the CLI, quoted; anything that is not a model name is refused', () => {
    expect(presetInputs({ agent: name, model: 'm-1.5' }).agentCommand).toContain(" --model 'm-1.5'")
    expect(() => presetInputs({ agent: name, model: "x'; curl evil #" })).toThrow(
      /^model: .* is not a model name/
    )
  })

  test('its Dockerfile pins the CLI version and the base by digest, the same default base', () => {
    const text = fs.readFileSync(path.join(ROOT, preset.imageDir, 'Dockerfile'), 'utf8')
    expect(text).toMatch(/^ARG [A-Z_]+_VERSION=\d+\.\d+\.\d+$/m)
    expect(text).toContain(preset.npmPackage)
    expect(baseImages(text, {})).toEqual([
      expect.objectContaining({ ref: DEFAULT_NODE_IMAGE, pin: 'digest' })
    ])
  })
})

test('an unknown preset names the input and the choices', () => {
  expect(() => presetInputs({ agent: 'claude' })).toThrow(
    /^agent: "claude" is not a preset; use one of claude-code, codex, gemini-cli/
  )
})

test('a preset without the key says where it goes, and tells a fork why it has none', () => {
  expect(() => presetInputs({ agent: 'claude-code' }, {})).toThrow(ConfigurationError)
  expect(() => presetInputs({ agent: 'claude-code' }, {})).toThrow(
    /AIRLOCK_AGENT_API_KEY .*the sandbox never sees it/
  )
  expect(() =>
    withPreset(reader({ agent: 'codex' }), {
      actionRoot: ROOT,
      environment: {},
      forkPullRequest: true
    })
  ).toThrow(/comes from a fork/)
})

test('the key variable can never be passed into the sandbox', () => {
  expect(() => presetInputs({ agent: 'claude-code', env: AGENT_KEY_ENV })).toThrow(
    /also listed in env/
  )
})

test('allowlist without a preset gets the default proxy image, also when the policy sets it', () => {
  const p = withPreset(reader({ network: 'allowlist' }), { actionRoot: ROOT, environment: {} })
  expect(p.read('proxy-image')).toBe(DEFAULT_PROXY_IMAGE)
  const fromPolicy = withPreset(reader({}), {
    actionRoot: ROOT,
    environment: {},
    policy: { network: 'allowlist' }
  })
  expect(fromPolicy.read('proxy-image')).toBe(DEFAULT_PROXY_IMAGE)
  expect(withPreset(reader({}), { actionRoot: ROOT, environment: {} }).read('proxy-image')).toBe(
    undefined
  )
})

describe('the ref of a pull_request run', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-ref-unit-'))
  const event = path.join(dir, 'event.json')
  fs.writeFileSync(event, JSON.stringify({ pull_request: { head: { sha: 'c'.repeat(40) } } }))
  const read = (p: string) => fs.readFileSync(p, 'utf8')

  test.each([
    ['pull_request', 'c'.repeat(40)],
    ['pull_request_review', 'c'.repeat(40)],
    ['push', undefined],
    ['workflow_dispatch', undefined]
  ])('%s → %s', (eventName, sha) => {
    expect(parseEvent({ GITHUB_EVENT_NAME: eventName }, read(event)).pullRequest?.headSha).toBe(sha)
  })

  test('an explicit ref wins; a head the checkout lacks is an error naming ref', async () => {
    const repo = path.join(dir, 'repo')
    fs.mkdirSync(repo)
    execFileSync('git', ['init', '-q', repo])
    expect(
      await runRef({
        given: 'main',
        repoPath: repo,
        headSha: parseEvent({ GITHUB_EVENT_NAME: 'pull_request' }, read(event)).pullRequest?.headSha
      })
    ).toBe('main')
    await expect(
      runRef({
        given: undefined,
        repoPath: repo,
        headSha: parseEvent({ GITHUB_EVENT_NAME: 'pull_request' }, read(event)).pullRequest?.headSha
      })
    ).rejects.toThrow(/^ref: the checkout .* does not contain the pull request's head commit c{40}/)
    expect(
      await runRef({
        given: undefined,
        repoPath: repo,
        headSha: parseEvent({ GITHUB_EVENT_NAME: 'push' }, read(event)).pullRequest?.headSha
      })
    ).toBeUndefined()
  })
})

// Precedence (docs/POLICY.md): an input given in the workflow, then the base branch's policy
// file, then the preset's defaults, then the built-in defaults.
describe('a preset below the policy file', () => {
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
  /** The edge's chain: the preset's defaults below the policy, the policy below the inputs. */
  function withPolicyAndPreset(raw: Record<string, string>, policyText: string) {
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-presets-policy-'))
    const policy = loaded(policyText)
    const p = withPreset(reader(raw), {
      actionRoot: ROOT,
      environment: KEY,
      policy: policy.policy.values
    })
    return getInputs(p.read, {
      workspace: ws,
      environment: KEY,
      hostUid: 1000,
      event: LOCAL_EVENT,
      hostCpus: 4,
      defaultRunId: 'unit-1',
      policy,
      ...(p.preset ? { preset: { name: p.preset.name, dockerfile: p.dockerfile as string } } : {})
    })
  }

  test("the policy's network: none is not loosened by the preset's allowlist", () => {
    const run = () => withPolicyAndPreset({ agent: 'claude-code', task: 't' }, 'network: none\n')
    expect(run).toThrow(ConfigurationError)
    expect(run).toThrow(/^agent: .*policy file sets network: none/)
  })

  test('an explicit network input still wins over the policy (and is recorded as overriding it)', () => {
    const inputs = withPolicyAndPreset(
      { agent: 'claude-code', task: 't', network: 'allowlist' },
      'network: none\n'
    )
    expect(inputs.network).toBe('allowlist')
    expect(inputs.policy.overridden).toEqual(['network'])
  })

  test("the policy's allow-hosts wins over the preset's; an explicit input over both", () => {
    const policy = 'network: allowlist\nallow-hosts: [docs.example.com]\n'
    const fromPolicy = withPolicyAndPreset({ agent: 'codex', task: 't' }, policy)
    expect(fromPolicy.egress?.allow.map((r) => r.host)).toEqual(['docs.example.com'])
    const given = withPolicyAndPreset(
      { agent: 'codex', task: 't', 'allow-hosts': 'pkg.example.org' },
      policy
    )
    expect(given.egress?.allow.map((r) => r.host)).toEqual(['pkg.example.org'])
  })

  test('a setting the preset fills is not reported as overriding the policy', () => {
    const inputs = withPolicyAndPreset({ agent: 'gemini-cli', task: 't' }, 'network: allowlist\n')
    expect(inputs.network).toBe('allowlist')
    expect(inputs.policy.settings).toEqual(['network'])
    expect(inputs.policy.overridden).toEqual([])
  })
})
