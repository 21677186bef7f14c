// The cache scope rule: a pull request's entries are never restored on the default branch, nor on
// another pull request; the agent image is read only from entries the default branch wrote.
import {
  cacheScope,
  dependencyCacheKeys,
  imageCacheKeys,
  restorable
} from '../../src/cache/keys.js'

const lock = [{ path: 'package-lock.json', sha256: 'a'.repeat(64) }]
const facts = { lockfiles: lock, command: 'npm ci', image: 'k1', network: ['registry.npmjs.org'] }

describe('cacheScope', () => {
  test.each([
    [
      {
        eventName: undefined,
        ref: undefined,
        defaultBranch: undefined,
        pullNumber: undefined,
        repository: '/src/a'
      },
      'local-3213ad7c2b804764'
    ],
    [
      { eventName: 'push', ref: 'refs/heads/main', defaultBranch: 'main', pullNumber: undefined },
      'base'
    ],
    [
      {
        eventName: 'schedule',
        ref: 'refs/heads/main',
        defaultBranch: 'main',
        pullNumber: undefined
      },
      'base'
    ],
    [
      { eventName: 'pull_request', ref: 'refs/pull/7/merge', defaultBranch: 'main', pullNumber: 7 },
      'pr-7'
    ],
    // A pull request whose head branch is named like the default branch is still the pull request.
    [
      {
        eventName: 'pull_request_target',
        ref: 'refs/heads/main',
        defaultBranch: 'main',
        pullNumber: 8
      },
      'pr-8'
    ],
    [
      { eventName: 'issue_comment', ref: 'refs/heads/main', defaultBranch: 'main', pullNumber: 9 },
      'pr-9'
    ],
    [
      {
        eventName: 'workflow_dispatch',
        ref: 'refs/heads/main',
        defaultBranch: 'main',
        pullNumber: undefined
      },
      'base'
    ]
  ])('%o → %s', (f, scope) => {
    expect(cacheScope(f)).toBe(scope)
  })

  test('another branch or a default branch unknown to the payload is its own scope, never base', () => {
    const other = cacheScope({
      eventName: 'push',
      ref: 'refs/heads/feature',
      defaultBranch: 'main',
      pullNumber: undefined
    })
    expect(other).toMatch(/^ref-[a-f0-9]{16}$/)
    const unknown = cacheScope({
      eventName: 'push',
      ref: 'refs/heads/main',
      defaultBranch: undefined,
      pullNumber: undefined
    })
    expect(unknown).not.toBe('base')
  })
})

describe('the scope follows the code that ran, not the event', () => {
  const EVENT_SHA = 'e'.repeat(40)
  const PR_HEAD = 'f'.repeat(40)
  const dispatch = (commit: string | undefined) =>
    cacheScope({
      eventName: 'workflow_dispatch',
      ref: 'refs/heads/main',
      defaultBranch: 'main',
      pullNumber: undefined,
      eventSha: EVENT_SHA,
      ...(commit !== undefined ? { commit } : {})
    })

  test("a manual run on the default branch for a pull request's head never writes the default branch's scope", () => {
    const scope = dispatch(PR_HEAD)
    expect(scope).not.toBe('base')
    expect(scope).toMatch(/^ref-[a-f0-9]{16}$/)
    expect(dependencyCacheKeys(scope, facts).key.startsWith('airlock-deps-v1-base-')).toBe(false)
    expect(imageCacheKeys(scope, 'k').writable).toBe(false)
    // It may still restore the default branch's entries; its own are its own.
    expect(restorable('deps', scope, dependencyCacheKeys(scope, facts).key)).toBe(true)
    expect(restorable('deps', 'base', dependencyCacheKeys(scope, facts).key)).toBe(false)
  })

  test("a run on the event's own commit of the default branch is the default branch's", () => {
    expect(dispatch(EVENT_SHA)).toBe('base')
  })

  test('a commit the event does not name, with no event commit known, is never base', () => {
    expect(
      cacheScope({
        eventName: 'push',
        ref: 'refs/heads/main',
        defaultBranch: 'main',
        pullNumber: undefined,
        commit: PR_HEAD
      })
    ).not.toBe('base')
  })
})

describe('dependency cache keys', () => {
  test('the key names the scope and changes with the lockfile, the command and the image', () => {
    const k = dependencyCacheKeys('pr-7', facts).key
    expect(k).toMatch(/^airlock-deps-v1-pr-7-[a-f0-9]{40}$/)
    expect(dependencyCacheKeys('pr-7', { ...facts, command: 'npm i' }).key).not.toBe(k)
    expect(dependencyCacheKeys('pr-7', { ...facts, image: 'k2' }).key).not.toBe(k)
    // A wrong allowlist makes another entry: a warm run cannot hide a denial a cold run meets.
    expect(dependencyCacheKeys('pr-7', { ...facts, network: ['registry.test'] }).key).not.toBe(k)
    expect(dependencyCacheKeys('pr-7', { ...facts, network: [] }).key).not.toBe(k)
    expect(
      dependencyCacheKeys('pr-7', {
        ...facts,
        lockfiles: [{ path: 'package-lock.json', sha256: 'b'.repeat(64) }]
      }).key
    ).not.toBe(k)
  })

  test('the default branch looks up only its own entries; a pull request its own, then the base', () => {
    const base = dependencyCacheKeys('base', facts)
    expect(
      [base.key, ...base.restoreKeys].every((k) => k.startsWith('airlock-deps-v1-base-'))
    ).toBe(true)
    const pr = dependencyCacheKeys('pr-7', facts)
    expect(pr.restoreKeys).toEqual([
      'airlock-deps-v1-pr-7-',
      `airlock-deps-v1-base-${pr.key.slice(-40)}`,
      'airlock-deps-v1-base-'
    ])
  })

  test.each([
    ['base', 'airlock-deps-v1-pr-7-abc', false],
    ['base', 'airlock-deps-v1-base-abc', true],
    ['pr-7', 'airlock-deps-v1-pr-7-abc', true],
    ['pr-7', 'airlock-deps-v1-pr-8-abc', false],
    ['pr-7', 'airlock-deps-v1-pr-77-abc', false],
    ['pr-7', 'airlock-deps-v1-base-abc', true],
    ['local-aaaa', 'airlock-deps-v1-local-aaaa-abc', true],
    // Another repository on the same machine, or a default branch's entry: never.
    ['local-aaaa', 'airlock-deps-v1-local-bbbb-abc', false],
    ['local-aaaa', 'airlock-deps-v1-local-abc', false],
    ['local-aaaa', 'airlock-deps-v1-base-abc', false],
    ['base', 'something-else', false]
  ])('a run in scope %s may use %s: %s', (scope, found, ok) => {
    expect(restorable('deps', scope, found)).toBe(ok)
  })
})

describe('the scope of the CLI', () => {
  test('one scope per repository on a machine; it restores only its own entries', () => {
    const local = (repository: string): string =>
      cacheScope({
        eventName: '',
        ref: undefined,
        defaultBranch: undefined,
        pullNumber: undefined,
        repository
      })
    const a = local('/home/u/project-a')
    const b = local('/home/u/project-b')
    expect(a).toMatch(/^local-[a-f0-9]{16}$/)
    expect(b).not.toBe(a)
    const keysA = dependencyCacheKeys(a, facts)
    const keysB = dependencyCacheKeys(b, facts)
    expect(keysB.restoreKeys).toEqual([`airlock-deps-v1-${b}-`])
    expect(keysB.restoreKeys.some((k) => keysA.key.startsWith(k))).toBe(false)
    expect(restorable('deps', b, keysA.key)).toBe(false)
    // The agent image is keyed by its exact build inputs: shared on the machine.
    expect(imageCacheKeys(a, 'x').key).toBe(imageCacheKeys(b, 'x').key)
    expect(restorable('image', b, imageCacheKeys(a, 'x').key)).toBe(true)
  })
})

describe('image cache keys', () => {
  test('only the default branch (and a local machine) writes; every run reads the base entry', () => {
    expect(imageCacheKeys('base', 'x').writable).toBe(true)
    expect(imageCacheKeys('local', 'x').writable).toBe(true)
    expect(imageCacheKeys('pr-7', 'x')).toEqual({
      key: 'airlock-image-v1-base-x',
      restoreKeys: [],
      writable: false
    })
    expect(imageCacheKeys('ref-0123', 'x').writable).toBe(false)
    expect(restorable('image', 'pr-7', 'airlock-image-v1-base-x-meta')).toBe(true)
    expect(restorable('image', 'base', 'airlock-image-v1-pr-7-x')).toBe(false)
  })
})

describe('the dependency cache in the container specs', () => {
  test('only the install phase may mount it', async () => {
    const { containerSpec } = await import('../../src/sandbox/spec.js')
    const { fixturePlan } = await import('../../__fixtures__/plan.js')
    const plan = fixturePlan()
    const cache = {
      dir: '/host/cache',
      target: '/airlock/cache',
      env: ['npm_config_cache=/airlock/cache/npm']
    }
    const res = { imageId: 'sha256:x', workspaceDir: '/w', taskFile: '/t', env: [], cache }
    for (const name of ['agent', 'tests', 'baseline'] as const) {
      const phase = {
        name,
        command: ['true'],
        network: 'none' as const,
        timeoutMs: 1,
        graceMs: 1,
        workspaceWritable: true
      }
      expect(() => containerSpec(plan, phase, res)).toThrow(/install phase only/)
    }
    const setup = {
      name: 'setup' as const,
      command: ['true'],
      network: 'none' as const,
      timeoutMs: 1,
      graceMs: 1,
      workspaceWritable: true
    }
    const spec = containerSpec(plan, setup, res)
    expect(spec.mounts).toContainEqual({
      source: '/host/cache',
      target: '/airlock/cache',
      readOnly: false
    })
    expect(spec.env).toContain('npm_config_cache=/airlock/cache/npm')
  })
})
