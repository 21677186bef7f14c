// The cache keys and the scope rule, pure. A cache entry is written in the scope of the run that
// made it and read only from that scope or from the default branch's: a pull request's entry is
// never restored on the default branch (nor on another pull request), whatever the backend.
import { createHash } from 'node:crypto'
import type { RunEvent } from '../event.js'

/**
 * Where a run's cache entries live. `base`: the repository's default branch (trusted: what is
 * merged). `pr-N`: one pull request. `ref-…`: another branch. `local-…`: the CLI on a machine, one
 * scope per repository (named by a hash of its folder): the Actions cache is per repository
 * already, a machine's cache folder is shared by every repository run on it.
 */
export type CacheScope = string

export interface ScopeFacts {
  eventName: string | undefined
  /** GITHUB_REF, e.g. refs/heads/main or refs/pull/7/merge. */
  ref: string | undefined
  defaultBranch: string | undefined
  pullNumber: number | undefined
  /** Outside GitHub Actions: the repository's identity on the machine (its folder's real path). */
  repository?: string
  /** GITHUB_SHA: the commit the event is for. */
  eventSha?: string
  /**
   * The commit whose code the run works on (its `ref`, resolved). A run on the default branch
   * writes the default branch's scope only when this is the event's own commit: a manual run for
   * a pull request (a fork's too) starts on the default branch but runs the pull request's code.
   */
  commit?: string
}

const PR_EVENTS = new Set([
  'pull_request',
  'pull_request_target',
  'pull_request_review',
  'pull_request_review_comment'
])

/** The scope of a run; outside GitHub Actions (no event name): `local-` and the repository's hash. */
export function cacheScope(f: ScopeFacts): CacheScope {
  if (f.eventName === undefined || f.eventName === '') return `local-${hash(f.repository ?? '')}`
  // Anything about a pull request (a comment command too) is that pull request's scope.
  if (PR_EVENTS.has(f.eventName) || f.pullNumber !== undefined)
    return `pr-${f.pullNumber ?? 'unknown'}`
  // Scoped by the code that ran, not by the event: another commit than the event's own is its
  // own scope (restoring from the default branch's, never writing it).
  if (f.commit !== undefined && f.commit !== f.eventSha) return `ref-${hash(`commit:${f.commit}`)}`
  const branch = f.ref?.startsWith('refs/heads/') ? f.ref.slice('refs/heads/'.length) : undefined
  if (branch !== undefined && f.defaultBranch !== undefined && branch === f.defaultBranch)
    return 'base'
  // Another branch, a tag, a merge queue: its own scope, named by a hash (any characters).
  return `ref-${hash(f.ref ?? '')}`
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16)
}

/** Whether a scope is a machine's (the CLI's), of whichever repository. */
export function isLocalScope(scope: CacheScope): boolean {
  return scope === 'local' || scope.startsWith('local-')
}

/**
 * The scope of the run the event describes, for the code at `commit` (the run's resolved ref);
 * outside GitHub Actions, that of the repository at `repository` (its real path) on this machine.
 */
export function scopeForEvent(event: RunEvent, repository: string, commit?: string): CacheScope {
  return cacheScope({
    eventName: event.name,
    ref: event.ref,
    defaultBranch: event.defaultBranch,
    pullNumber: event.pullRequest?.number,
    repository,
    ...(event.sha !== undefined ? { eventSha: event.sha } : {}),
    ...(commit !== undefined ? { commit } : {})
  })
}

const KIND_PREFIX = { deps: 'airlock-deps-v1', image: 'airlock-image-v1' } as const
export type CacheKind = keyof typeof KIND_PREFIX

export interface CacheKeys {
  /** The exact entry this run would write (in its own scope). */
  key: string
  /** Looked up in order after `key`: the same scope by prefix, then the default branch's. */
  restoreKeys: string[]
  /** Whether this run may write the entry. */
  writable: boolean
}

/** What an install depends on: the dependency cache's key is made of these. */
export interface DepsFacts {
  lockfiles: { path: string; sha256: string | null }[]
  command: string
  image: string
  /** The install's allowlist and host mappings (what it may reach, and where a name leads). */
  network: string[]
}

/**
 * The dependency cache of a run: keyed by what the install depends on (lockfiles, the setup
 * command, the image, the allowlist), in the run's scope; restored from its own scope or (on
 * GitHub) the default branch's. A machine's scope restores only its own repository's entries.
 */
export function dependencyCacheKeys(scope: CacheScope, facts: DepsFacts): CacheKeys {
  const h = createHash('sha256')
  h.update('deps\0' + facts.command + '\0' + facts.image + '\0')
  for (const n of facts.network) h.update(`net\0${n}\0`)
  for (const l of [...facts.lockfiles].sort((a, b) => (a.path < b.path ? -1 : 1)))
    h.update(`${l.path}\0${l.sha256 ?? 'unreadable'}\0`)
  const digest = h.digest('hex').slice(0, 40)
  const own = `${KIND_PREFIX.deps}-${scope}-`
  const base = `${KIND_PREFIX.deps}-base-`
  const fromBase = scope !== 'base' && !isLocalScope(scope)
  const restoreKeys = [own, ...(fromBase ? [`${base}${digest}`, base] : [])]
  return { key: `${own}${digest}`, restoreKeys, writable: true }
}

/**
 * The agent image across runners: written only by default-branch runs (and on a machine by the
 * CLI), read by every run, only under its exact build inputs.
 */
export function imageCacheKeys(scope: CacheScope, imageKey: string): CacheKeys {
  // Keyed by the image's exact build inputs: repositories of one machine may share it.
  const writer = isLocalScope(scope) ? 'local' : 'base'
  return {
    key: `${KIND_PREFIX.image}-${writer}-${imageKey}`,
    restoreKeys: [],
    writable: scope === 'base' || isLocalScope(scope)
  }
}

/** Whether a key found by a lookup may be used by a run of `scope` (the rule, checked again). */
export function restorable(kind: CacheKind, scope: CacheScope, found: string): boolean {
  const p = KIND_PREFIX[kind]
  if (!found.startsWith(`${p}-`)) return false
  const from = found.slice(p.length + 1).split('-')[0]
  const owner = /^(pr|ref|local)$/.test(from)
    ? found
        .slice(p.length + 1)
        .split('-')
        .slice(0, 2)
        .join('-')
    : from
  if (kind === 'image') return from === (isLocalScope(scope) ? 'local' : 'base')
  return owner === scope || (owner === 'base' && !isLocalScope(scope))
}
