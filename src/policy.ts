import type { Buffer } from 'node:buffer'
import { boundedReader } from './input-bounds.js'
import * as path from 'node:path'
import YAML from 'yaml'
import { ConfigurationError, InfrastructureError, errorMessage } from './errors.js'
import { memory, runtimeName } from './input-read.js'
import type { InputReader } from './input-read.js'
import { GitError, git } from './workspace/git.js'

/**
 * The repository's policy file: the same settings as the inputs, stated once for every workflow.
 * It is read from the BASE commit of a pull request — never from the head, whose files are the
 * very thing under review — and an input given explicitly in the workflow overrides it.
 */
export const POLICY_PATH = '.github/airlock.yml'
export const POLICY_INPUT = 'policy-base'
const MAX_POLICY_BYTES = 64 * 1024

type Kind =
  | 'paths'
  | 'hosts'
  | 'logins'
  | 'boolean'
  | 'size'
  | 'positive-number'
  | 'positive-integer'
  | 'non-negative-number'
  | 'runtime'
  | 'command'
  | 'services'
  | { oneOf: readonly string[] }

/** Settings the file may hold: input names, with the form each value takes. */
export const POLICY_KEYS: Readonly<Record<string, Kind>> = {
  'allowed-paths': 'paths',
  'protected-paths': 'paths',
  network: { oneOf: ['none', 'allowlist'] },
  'allow-hosts': 'hosts',
  'max-model-requests': 'positive-integer',
  'max-model-tokens': 'positive-integer',
  runtime: 'runtime',
  memory: 'size',
  cpus: 'positive-number',
  'pids-limit': 'positive-integer',
  'workspace-size': 'size',
  'timeout-minutes': 'positive-number',
  'grace-seconds': 'non-negative-number',
  'max-log-bytes': 'positive-integer',
  'allow-unpinned-base': 'boolean',
  'setup-command': 'command',
  'setup-allow-hosts': 'hosts',
  services: 'services',
  isolation: 'runtime',
  'isolation-fallback': 'runtime',
  approvers: 'logins',
  'allow-self-approval': 'boolean'
}
const META_KEYS = ['version'] as const

/** A parsed policy: each setting as the raw string an input of that name would carry. */
export interface Policy {
  values: Record<string, string>
}

/** Which policy a run applied (recorded in report.json). */
export interface PolicyRecord {
  path: string
  /** The base revision the policy was read from, as given; null when there was none. */
  base: string | null
  /** The commit `base` resolved to (null when read through the API by a ref name). */
  commit: string | null
  /** Git blob SHA of the file at the base; null when the base has no policy file. */
  blobSha: string | null
  via: 'git' | 'api' | null
  /** Settings the file set, and those of them an explicit input overrode. */
  settings: string[]
  overridden: string[]
}

export interface LoadedPolicy {
  policy: Policy
  record: PolicyRecord
}

export const NO_POLICY: LoadedPolicy = {
  policy: { values: {} },
  record: {
    path: POLICY_PATH,
    base: null,
    commit: null,
    blobSha: null,
    via: null,
    settings: [],
    overridden: []
  }
}

// ---- parsing --------------------------------------------------------------------------------

export function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    prev = cur
  }
  return prev[b.length]
}

/** The closest valid key, when it is close enough to be a plausible typo. */
export function nearestKey(key: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Infinity
  for (const c of candidates) {
    const d = levenshtein(key.toLowerCase(), c)
    if (d < bestDistance) {
      best = c
      bestDistance = d
    }
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined
}

/**
 * Parses and validates the file. Every problem is reported at once, each naming the key and the
 * form expected; an unknown key is an error (a misspelt restriction must not pass silently) with
 * the nearest valid name.
 */
export function parsePolicy(text: string, where = POLICY_PATH): Policy {
  let doc: unknown
  try {
    doc = YAML.parse(text, { uniqueKeys: true, maxAliasCount: 50, prettyErrors: true })
  } catch (error) {
    throw new ConfigurationError(where, `is not valid YAML: ${errorMessage(error)}`)
  }
  if (doc === null || doc === undefined) return { values: {} }
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigurationError(where, 'must be a mapping of settings (key: value)')
  }
  const problems: string[] = []
  const values: Record<string, string> = {}
  const known = [...Object.keys(POLICY_KEYS), ...META_KEYS]
  for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
    if (key === 'version') {
      if (value !== 1) problems.push(`version: ${JSON.stringify(value)} is not supported; use 1`)
      continue
    }
    const kind = POLICY_KEYS[key]
    if (kind === undefined) {
      const near = nearestKey(key, known)
      problems.push(
        `unknown setting "${key}"${near ? `; did you mean "${near}"?` : ''} (valid: ${known.join(', ')})`
      )
      continue
    }
    const result = convert(kind, value)
    if (typeof result === 'string') values[key] = result
    else problems.push(`${key}: ${result.error}`)
  }
  if (problems.length > 0) throw new ConfigurationError(where, problems.join('; '))
  return { values }
}

function convert(kind: Kind, value: unknown): string | { error: string } {
  const shown = JSON.stringify(value)
  if (typeof kind === 'object') {
    return typeof value === 'string' && kind.oneOf.includes(value)
      ? value
      : { error: `${shown} is not one of: ${kind.oneOf.join(', ')}` }
  }
  switch (kind) {
    case 'boolean':
      return typeof value === 'boolean' ? String(value) : { error: `${shown} is not true or false` }
    case 'size':
      if (typeof value !== 'number' && typeof value !== 'string') {
        return { error: `${shown} is not a size such as 512m or 2g` }
      }
      return checked(() => {
        const raw = String(value).trim()
        memory(raw, 'memory') // throws with the form expected
        return raw
      })
    case 'positive-number':
    case 'positive-integer':
    case 'non-negative-number': {
      const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN
      const ok =
        typeof value !== 'string' || value.trim() !== ''
          ? Number.isFinite(n) &&
            (kind === 'non-negative-number' ? n >= 0 : n > 0) &&
            (kind !== 'positive-integer' || Number.isInteger(n))
          : false
      if (ok) return String(n)
      const what =
        kind === 'positive-integer'
          ? 'a whole number greater than 0'
          : kind === 'positive-number'
            ? 'a number greater than 0'
            : 'a number of 0 or more'
      return { error: `${shown} is not ${what}` }
    }
    case 'services':
      // Checked in full where the input is read; here only its shape.
      return typeof value === 'object' && value !== null && !Array.isArray(value)
        ? YAML.stringify(value)
        : { error: `${shown} is not a mapping of service name → {image, health, ...}` }
    case 'command':
      return typeof value === 'string' && value.trim() !== '' && !value.includes('\0')
        ? value
        : { error: `${shown} is not a shell command (a non-empty string)` }
    case 'runtime':
      return typeof value === 'string'
        ? checked(() => runtimeName('runtime', value))
        : { error: `${shown} is not a runtime name (e.g. runc, runsc)` }
    case 'paths':
    case 'hosts':
    case 'logins': {
      const items = typeof value === 'string' ? [value] : value
      if (!Array.isArray(items) || items.some((i) => typeof i !== 'string' || i.trim() === '')) {
        return { error: `${shown} is not a list of non-empty strings` }
      }
      const bad = (items as string[]).find((i) => !listItemOk(kind, i.trim()))
      if (bad !== undefined) return { error: `"${bad}" is not ${listItemName(kind)}` }
      return (items as string[]).map((i) => i.trim()).join('\n')
    }
  }
}

/** The value from one of the input readers, or its complaint (without the input name). */
function checked(read: () => string): string | { error: string } {
  try {
    return read()
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error
    return { error: error.message.slice(error.input.length + 2) }
  }
}

function listItemOk(kind: 'paths' | 'hosts' | 'logins', item: string): boolean {
  if (/[\n\r\0,]/.test(item)) return false
  if (kind === 'paths') return !item.startsWith('/') && !item.split('/').includes('..')
  if (kind === 'hosts') return /^(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?$/.test(item)
  // a user login, or @org/team
  return /^@?[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(\/[A-Za-z0-9_.-]+)?$/.test(item)
}

function listItemName(kind: 'paths' | 'hosts' | 'logins'): string {
  if (kind === 'paths') return 'a glob relative to the repository root (no leading /, no ..)'
  if (kind === 'hosts') return 'a host name (optionally *.domain and :port)'
  return 'a GitHub login or @org/team'
}

// ---- applying -------------------------------------------------------------------------------

/** A reader that returns the input when it was given, else the policy's value. */
export function withPolicy(read: InputReader, policy: Policy): InputReader {
  return (name) => read(name) ?? policy.values[name]
}

/** The record, completed with which of the file's settings an explicit input overrode. */
export function recordFor(loaded: LoadedPolicy, read: InputReader): PolicyRecord {
  const settings = Object.keys(loaded.policy.values).sort()
  return {
    ...loaded.record,
    settings,
    overridden: settings.filter((k) => read(k) !== undefined)
  }
}

// ---- loading from the base commit -----------------------------------------------------------

/**
 * Reads a file of the repository at a revision through GitHub's contents API (the entry passes
 * `contentsReader` from github/contents.ts): null when the revision has no such file; throws when
 * the revision itself is unknown.
 */
export type ContentsApi = (
  path: string,
  ref: string
) => Promise<{ sha: string; content: Buffer } | null>

export interface LoadOptions {
  /** Local checkout whose object store is searched first. */
  repoPath: string
  /** The base revision (the pull request's base SHA); undefined → no policy file is read. */
  base: string | undefined
  /** Used when the base commit is not in the local clone (shallow checkouts). */
  api?: ContentsApi
}

/**
 * Loads the policy that applies: the file as it is in the base commit. Fails closed — a base that
 * can be found in neither the clone nor through the API, a file that is not a regular file, too
 * large, or invalid, stops the run instead of running without the policy.
 */
export async function loadPolicy(options: LoadOptions): Promise<LoadedPolicy> {
  const base = options.base
  if (base === undefined) return NO_POLICY
  if (!/^[^-\s\0][^\s\0]*$/.test(base) || base.includes('..')) {
    throw new ConfigurationError(POLICY_INPUT, `"${base}" is not a commit SHA or branch name`)
  }
  const commit = await localCommit(options.repoPath, base)
  if (commit !== undefined) {
    const file = await gitFile(options.repoPath, commit)
    return loaded(file, { base, commit, via: 'git' })
  }
  if (options.api === undefined) {
    throw new ConfigurationError(
      POLICY_INPUT,
      `the base commit ${base} is not in the local clone and there is no token to read ${POLICY_PATH} through the API; check out with fetch-depth: 0 (or 2 for the pull request's merge commit) or give github-token`
    )
  }
  const file = await options.api(POLICY_PATH, base).catch((error: unknown) => {
    if (error instanceof ConfigurationError || error instanceof InfrastructureError) throw error
    throw new InfrastructureError(
      `cannot read ${POLICY_PATH} at ${base} through the API: ${errorMessage(error)}`,
      { cause: error }
    )
  })
  if (file !== null && file.content.length > MAX_POLICY_BYTES) {
    throw new ConfigurationError(POLICY_PATH, `is larger than ${MAX_POLICY_BYTES} bytes`)
  }
  return loaded(file === null ? null : { sha: file.sha, text: file.content.toString('utf8') }, {
    base,
    commit: /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(base) ? base : null,
    via: 'api'
  })
}

function loaded(
  file: { sha: string; text: string } | null,
  at: { base: string; commit: string | null; via: 'git' | 'api' }
): LoadedPolicy {
  const where = `${POLICY_PATH} (at ${at.commit ?? at.base})`
  return {
    policy: file === null ? { values: {} } : parsePolicy(file.text, where),
    record: {
      path: POLICY_PATH,
      base: at.base,
      commit: at.commit,
      blobSha: file?.sha ?? null,
      via: at.via,
      settings: [],
      overridden: []
    }
  }
}

async function localCommit(repoPath: string, base: string): Promise<string | undefined> {
  try {
    const out = await git(
      ['rev-parse', '--verify', '--quiet', '--end-of-options', `${base}^{commit}`],
      {
        cwd: repoPath
      }
    )
    return out.stdout.toString('utf8').trim()
  } catch (error) {
    if (error instanceof GitError) return undefined
    throw error
  }
}

async function gitFile(
  repoPath: string,
  commit: string
): Promise<{ sha: string; text: string } | null> {
  const listing = (
    await git(['ls-tree', '-z', '--full-tree', commit, '--', POLICY_PATH], { cwd: repoPath })
  ).stdout.toString('utf8')
  const entry = listing.split('\0').find((l) => l !== '')
  if (entry === undefined) return null
  const m = /^(\d+) (\w+) ([0-9a-f]+)\t/.exec(entry)
  if (!m || m[2] !== 'blob' || (m[1] !== '100644' && m[1] !== '100755')) {
    throw new ConfigurationError(
      POLICY_PATH,
      `at ${commit} is not a regular file (mode ${m?.[1] ?? '?'}); commit it as a plain file`
    )
  }
  const blob = await git(['cat-file', 'blob', m[3]], {
    cwd: repoPath,
    maxStdout: MAX_POLICY_BYTES + 1
  })
  if (blob.truncated || blob.stdout.length > MAX_POLICY_BYTES) {
    throw new ConfigurationError(POLICY_PATH, `is larger than ${MAX_POLICY_BYTES} bytes`)
  }
  return { sha: m[3], text: blob.stdout.toString('utf8') }
}

/**
 * The policy for this run, from the inputs: base from `policy-base`, else the pull request event's
 * base SHA (given by the entry); `api` (read only, given by the entry when there is a token) is
 * used when the base commit is not in the clone.
 */
export async function policyForRun(options: {
  read: InputReader
  workspace: string
  /** The pull request's base SHA from the event (github/context.ts reads it), if any. */
  eventBase?: string
  api?: ContentsApi
}): Promise<LoadedPolicy> {
  const read = boundedReader(options.read)
  return loadPolicy({
    repoPath: path.resolve(options.workspace, read('path') ?? '.'),
    base: read(POLICY_INPUT) ?? options.eventBase,
    ...(options.api !== undefined ? { api: options.api } : {})
  })
}

/** The policy file's values at `base` (the clone first, then `api`). */
export async function policyValuesAt(at: {
  repoPath: string
  base: string
  api: ContentsApi
}): Promise<Record<string, string>> {
  const loaded = await loadPolicy(at)
  return loaded.policy.values
}

/** One line for the log: which policy applies. */
export function describePolicy(record: PolicyRecord): string {
  if (record.base === null) return `policy: none (no ${POLICY_INPUT} and no pull request base)`
  if (record.blobSha === null) return `policy: no ${record.path} at ${record.commit ?? record.base}`
  return `policy: ${record.path} blob ${record.blobSha} at ${record.commit ?? record.base} (via ${record.via}); settings: ${record.settings.join(', ') || 'none'}${record.overridden.length > 0 ? `; overridden by inputs: ${record.overridden.join(', ')}` : ''}`
}
