import YAML from 'yaml'
import { ConfigurationError, errorMessage } from '../errors.js'
import type { InputReader } from '../input-read.js'
import { convert } from './values.js'
import type { Kind } from './values.js'
import { INPUT } from '../input-names.js'
import { suggest } from '../suggest.js'

/**
 * The repository's policy file: the same settings as the inputs, stated once for every workflow.
 * It is read from the BASE commit of a pull request — never from the head, whose files are the
 * very thing under review — and an input given explicitly in the workflow overrides it.
 */
export const POLICY_PATH = '.github/airlock.yml'
export const POLICY_INPUT = INPUT.policyBase

/** Settings the file may hold: input names, with the form each value takes. */
export const POLICY_KEYS: Readonly<Record<string, Kind>> = {
  'allowed-paths': 'paths',
  'protected-paths': 'paths',
  network: { oneOf: ['none', 'allowlist'] },
  'allow-hosts': 'hosts',
  'max-model-requests': 'positive-integer',
  'max-model-tokens': 'positive-integer',
  'max-cost-usd': 'positive-number',
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
  'required-approvals': 'positive-integer',
  'protected-approvers': 'logins',
  'allow-self-approval': 'boolean',
  'threat-review': { oneOf: ['acknowledge', 'block'] }
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

/** Where the task text came from, as report.json records it (`task.origin`). */
export interface TaskOrigin {
  /** input: the text of the input; base: the file at the base commit; workspace: the checkout. */
  from: 'input' | 'base' | 'workspace'
  /** The file, relative to the repository (base and workspace). */
  path?: string
  /** The base commit the file was read at, and its blob (base). */
  commit?: string | null
  blobSha?: string
  /** The pull request's checkout held another text for this file; it was not used. */
  changedInPullRequest?: boolean
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
      const near = suggest(key, known)[0]
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

/** One line for the log: which policy applies. */
export function describePolicy(record: PolicyRecord): string {
  if (record.base === null) return `policy: none (no ${POLICY_INPUT} and no pull request base)`
  if (record.blobSha === null) return `policy: no ${record.path} at ${record.commit ?? record.base}`
  return `policy: ${record.path} blob ${record.blobSha} at ${record.commit ?? record.base} (via ${record.via}); settings: ${record.settings.join(', ') || 'none'}${record.overridden.length > 0 ? `; overridden by inputs: ${record.overridden.join(', ')}` : ''}`
}
