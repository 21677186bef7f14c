import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { ConfigurationError } from '../../src/errors.js'
import { getInputs } from '../../src/inputs.js'
import { chooseTier, resolveIsolation, resolveRuntime } from '../../src/isolation/isolation.js'
import type { DaemonRuntimes, RiskFacts } from '../../src/isolation/isolation.js'
import { parsePolicy } from '../../src/policy/policy-file.js'
import { renderComment } from '../../src/report/comment.js'
import { sampleReport } from '../report/sample.js'
import { LOCAL_EVENT, readRunEvent } from '../../src/event.js'

const SAFE: RiskFacts = {
  fork: false,
  network: 'none',
  credentials: 0,
  setup: false,
  dependencyChanges: [],
  needsNetwork: false
}

describe('isolation: auto', () => {
  test.each<[string, Partial<RiskFacts>, string, RegExp]>([
    ['same-repository, no network', {}, 'runc', /same-repository change/],
    ['a fork', { fork: true }, 'runsc', /from a fork/],
    ['network allowlist', { network: 'allowlist' }, 'runsc', /network \(allowlist\)/],
    ['routed credentials', { credentials: 2 }, 'runsc', /2 credential route/],
    ['an install phase', { setup: true }, 'runsc', /install scripts/],
    [
      'dependency changes',
      { dependencyChanges: ['package.json', 'web/yarn.lock'] },
      'runsc',
      /touches dependencies or install scripts \(package.json, web\/yarn.lock\)/
    ],
    ['no base to compare', { dependencyChanges: null }, 'runsc', /dependency changes unknown/],
    [
      'no base, and why',
      { dependencyChanges: null, noBase: 'no local main or master branch' },
      'runsc',
      /^no base to compare with \(no local main or master branch\): dependency changes unknown$/
    ],
    [
      "compared with the repository's default branch: no dependency change",
      { comparedWith: 'main' },
      'runc',
      /^same-repository change without network, credentials or dependency changes \(compared with main\)$/
    ],
    [
      "compared with the repository's default branch: a dependency change",
      { comparedWith: 'origin/trunk', dependencyChanges: ['package.json'] },
      'runsc',
      /touches dependencies or install scripts against origin\/trunk \(package.json\)/
    ],
    ['not a pull request (CLI) with a base', { fork: null }, 'runc', /same-repository/]
  ])('%s → %s', (_name, facts, tier, reason) => {
    const d = chooseTier({ ...SAFE, ...facts })
    expect(d.tier).toBe(tier)
    expect(d.reasons.join('; ')).toMatch(reason)
  })
})

describe('availability: fail closed, or the policy fallback', () => {
  // As on a machine where gVisor is registered without network support.
  const daemon: DaemonRuntimes = {
    runc: { path: 'runc' },
    runsc: { path: '/usr/bin/runsc', runtimeArgs: ['--network=none'] }
  }

  test('gVisor without network: auto picks it for a fork and gets it', () => {
    const d = resolveIsolation(
      { requested: 'auto', fallback: null },
      { ...SAFE, fork: true },
      daemon
    )
    expect(d).toMatchObject({ tier: 'runsc', fellBackFrom: null })
  })

  test('gVisor registered with --network=none cannot serve allowlist: refused with the fix', () => {
    const run = () =>
      resolveIsolation(
        { requested: 'auto', fallback: null },
        { ...SAFE, network: 'allowlist', needsNetwork: true },
        daemon
      )
    expect(run).toThrow(ConfigurationError)
    expect(run).toThrow(/runsc was chosen .* registered with --network=none.*isolation-fallback/)
  })

  test('…unless the policy names a fallback, recorded in the reasons', () => {
    const d = resolveIsolation(
      { requested: 'auto', fallback: 'runc' },
      { ...SAFE, network: 'allowlist', needsNetwork: true },
      daemon
    )
    expect(d.tier).toBe('runc')
    expect(d.fellBackFrom).toBe('runsc')
    expect(d.reasons.join('; ')).toMatch(/the policy's fallback runc is used/)
  })

  test('a named tier the daemon does not have (a microVM runtime) fails closed', () => {
    expect(() => resolveIsolation({ requested: 'kata', fallback: null }, SAFE, daemon)).toThrow(
      /no runtime "kata" \(it has: runc, runsc\)/
    )
    expect(
      resolveIsolation({ requested: 'kata', fallback: null }, SAFE, { ...daemon, kata: {} }).tier
    ).toBe('kata')
  })

  test('a fallback that cannot serve either is refused too', () => {
    expect(() =>
      resolveIsolation(
        { requested: 'runsc', fallback: 'kata' },
        { ...SAFE, needsNetwork: true },
        daemon
      )
    ).toThrow(/the fallback kata cannot serve either/)
  })
})

describe("gVisor with network: the daemon's second entry (runsc-net)", () => {
  // As ensure-docker.sh registers them: runsc without network, runsc-net joining the container's
  // own network namespace.
  const daemon: DaemonRuntimes = {
    runc: { path: 'runc' },
    runsc: { path: '/usr/bin/runsc', runtimeArgs: ['--network=none'] },
    'runsc-net': { path: '/usr/bin/runsc', runtimeArgs: ['--network=host'] }
  }
  const allowlist = { ...SAFE, network: 'allowlist' as const, needsNetwork: true }

  test('auto with allowlist: tier runsc, served by runsc-net, and the reasons say so', () => {
    const d = resolveIsolation({ requested: 'auto', fallback: null }, allowlist, daemon)
    expect(d).toMatchObject({ tier: 'runsc', runtime: 'runsc-net', fellBackFrom: null })
    expect(d.reasons.join('; ')).toMatch(
      /network \(allowlist\).*through the daemon's "runsc-net" entry/
    )
  })

  test('a run without network keeps plain runsc (its sandbox has no network at all)', () => {
    const d = resolveIsolation(
      { requested: 'auto', fallback: null },
      { ...SAFE, fork: true },
      daemon
    )
    expect(d).toMatchObject({ tier: 'runsc', runtime: 'runsc' })
  })

  test('a runsc-net that is itself registered with --network=none does not count', () => {
    const bad = { ...daemon, 'runsc-net': { runtimeArgs: ['--network=none'] } }
    expect(() => resolveIsolation({ requested: 'runsc', fallback: null }, allowlist, bad)).toThrow(
      /no "runsc-net" entry with network support/
    )
  })

  test('runc with network is served as itself; the network entry is only for gVisor', () => {
    const d = resolveIsolation({ requested: 'runc', fallback: null }, allowlist, daemon)
    expect(d).toMatchObject({ tier: 'runc', runtime: 'runc' })
  })

  test.each<[string, string, DaemonRuntimes, boolean, string | RegExp]>([
    ['networked run, runsc-net registered', 'runsc', daemon, true, 'runsc-net'],
    ['run without network', 'runsc', daemon, false, 'runsc'],
    ['runc, networked run', 'runc', daemon, true, 'runc'],
    [
      'networked run, no runsc-net: fails closed',
      'runsc',
      { runc: {}, runsc: { runtimeArgs: ['--network=none'] } },
      true,
      /^runtime: "runsc" is registered with --network=none.*no "runsc-net" entry.*use runtime runc/
    ],
    ['a runtime the daemon lacks is left to the preflight', 'kata', { runc: {} }, true, 'kata']
  ])('runtime named directly: %s (%s)', (_name, name, runtimes, needsNetwork, expected) => {
    if (typeof expected === 'string') {
      expect(resolveRuntime(name, runtimes, needsNetwork).runtime).toBe(expected)
      return
    }
    let error: unknown
    try {
      resolveRuntime(name, runtimes, needsNetwork)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigurationError)
    expect((error as ConfigurationError).input).toBe('runtime')
    expect((error as Error).message).toMatch(expected)
  })
})

describe('inputs and the event', () => {
  let dir: string
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-iso-'))
    fs.writeFileSync(path.join(dir, 'Dockerfile'), 'FROM scratch\n')
  })
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
  const ctx = (environment: NodeJS.ProcessEnv = {}, policy?: string) => ({
    workspace: dir,
    environment,
    hostUid: 1000,
    event: LOCAL_EVENT,
    hostCpus: 2,
    defaultRunId: 'r',
    ...(policy !== undefined
      ? {
          policy: {
            policy: parsePolicy(policy),
            record: {
              path: '.github/airlock.yml',
              base: null,
              commit: null,
              blobSha: null,
              via: null,
              settings: [],
              overridden: []
            }
          }
        }
      : {})
  })
  const base = { dockerfile: 'Dockerfile', 'agent-command': 'a' }

  test('fork from the pull request event', () => {
    const event = path.join(dir, 'event.json')
    const write = (head: string | null) =>
      fs.writeFileSync(
        event,
        JSON.stringify({
          pull_request: {
            head: { repo: head === null ? null : { full_name: head } },
            base: { repo: { full_name: 'o/r' } }
          }
        })
      )
    write('someone/r')
    expect(readRunEvent({ GITHUB_EVENT_PATH: event }).pullRequest?.fork).toBe(true)
    write('o/r')
    expect(readRunEvent({ GITHUB_EVENT_PATH: event }).pullRequest?.fork).toBe(false)
    write(null)
    expect(readRunEvent({ GITHUB_EVENT_PATH: event }).pullRequest?.fork).toBe(true)
    expect(readRunEvent({}).pullRequest?.fork ?? null).toBeNull()
  })

  test('isolation-fallback only from the policy file; isolation and runtime not both', () => {
    const i = getInputs(
      (n) => ({ ...base, isolation: 'auto' })[n],
      ctx({}, 'isolation-fallback: runc\n')
    )
    // Locally (no event) a run without a base compares with the default branch.
    expect(i.isolation).toEqual({
      requested: 'auto',
      fallback: 'runc',
      fork: null,
      compareWithDefaultBranch: true
    })
    expect(() =>
      getInputs((n) => ({ ...base, isolation: 'auto', 'isolation-fallback': 'runc' })[n], ctx())
    ).toThrow(/isolation-fallback: is read from the policy file/)
    expect(() =>
      getInputs((n) => ({ ...base, isolation: 'auto', runtime: 'runc' })[n], ctx())
    ).toThrow(/isolation\/runtime: give one of them/)
  })

  test('the comment names the tier and the reasons', () => {
    const report = sampleReport()
    report.isolation = {
      requested: 'auto',
      tier: 'runsc',
      runtime: 'runsc',
      reasons: ['the pull request comes from a fork'],
      fellBackFrom: null
    }
    expect(renderComment(report, '')).toContain(
      '**Isolation:** <code>runsc</code> (asked: <code>auto</code>) — the pull request comes from a fork'
    )
  })
})
