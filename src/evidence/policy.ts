import picomatch from 'picomatch'
import { GLOB_OPTIONS, SCRIPTS_SUFFIX } from '../path-rules.js'
import { git } from '../workspace/git.js'
import type { ChangedBlobs, ChangedFile } from './diff.js'

/**
 * Which paths the agent may change (`allowed-paths`) and which changes need a human's explicit
 * approval (`protected-paths`). Patterns are globs matched with picomatch: `**` crosses folders,
 * dotfiles match, and a pattern without `/` matches the file name in any folder (like
 * .gitignore). `GLOB#scripts` protects the `scripts` object of matching package.json files
 * rather than the whole file.
 */
export { DEFAULT_PROTECTED_PATHS, checkAllowedPaths, resolveProtectedPaths } from '../path-rules.js'

export interface PathPolicy {
  /** Empty: every path is allowed. */
  allowed: string[]
  /** The effective list (defaults merged with the user's additions, or the user's own list). */
  protected: string[]
}

export interface PolicyFinding {
  rule: string
  path: string | null
  detail: string
}

export interface PolicyResult {
  /** Changes outside allowed-paths and exceeded limits: the outcome becomes policy-violation. */
  violations: PolicyFinding[]
  /** Changes to protected paths: shown first, for an explicit approval. */
  protected: PolicyFinding[]
}

function matcher(pattern: string): (p: string) => boolean {
  // `dir/` means everything under dir; a pattern without `/` matches the name in any folder.
  // (picomatch's own `basename` option also rewrites patterns that do contain a slash.)
  const glob = pattern.endsWith('/')
    ? `${pattern}**`
    : pattern.includes('/')
      ? pattern
      : `**/${pattern}`
  return picomatch(glob, GLOB_OPTIONS)
}

/** Reads a blob of the private repository (null for the all-zero id of a missing side). */
export type BlobReader = (oid: string) => Promise<Buffer | null>

export function gitBlobReader(gitDir: string, maxBytes = 1024 * 1024): BlobReader {
  return async (oid) => {
    if (/^0+$/.test(oid)) return null
    const out = await git(['cat-file', 'blob', oid], { gitDir, maxStdout: maxBytes + 1 })
    if (out.truncated || out.stdout.length > maxBytes)
      throw new Error(`larger than ${maxBytes} bytes`)
    return out.stdout
  }
}

/**
 * Checks the changed files against the policy. Symlinks, deletions and mode changes are changes
 * like any other. For `#scripts` rules both versions of package.json are parsed and their
 * `scripts` objects compared; a file that cannot be parsed is flagged (never assumed harmless).
 */
export async function checkPolicy(
  policy: PathPolicy,
  files: ChangedFile[],
  blobs: ChangedBlobs[],
  readBlob: BlobReader
): Promise<PolicyResult> {
  const violations: PolicyFinding[] = []
  const flagged: PolicyFinding[] = []
  const allowed = policy.allowed.map(matcher)
  const whole = policy.protected
    .filter((p) => !p.endsWith(SCRIPTS_SUFFIX))
    .map((p) => ({ pattern: p, match: matcher(p) }))
  const scripts = policy.protected
    .filter((p) => p.endsWith(SCRIPTS_SUFFIX))
    .map((p) => ({ pattern: p, match: matcher(p.slice(0, -SCRIPTS_SUFFIX.length)) }))

  for (const [i, f] of files.entries()) {
    if (allowed.length > 0 && !allowed.some((m) => m(f.path))) {
      violations.push({
        rule: 'allowed-paths',
        path: f.path,
        detail: `${f.status} outside allowed-paths (${policy.allowed.join(', ')})`
      })
    }
    const hit = whole.find((w) => w.match(f.path))
    if (hit) {
      flagged.push({
        rule: 'protected-paths',
        path: f.path,
        detail: `${f.status}; matches ${hit.pattern}`
      })
      continue
    }
    const scriptRule = scripts.find((s) => s.match(f.path))
    if (scriptRule) {
      const change = await scriptsChange(blobs[i], readBlob)
      if (change !== null)
        flagged.push({
          rule: 'package-scripts',
          path: f.path,
          detail: `${change}; matches ${scriptRule.pattern}`
        })
    }
  }
  return { violations: capFindings(violations), protected: capFindings(flagged) }
}

/** Findings kept per list in the report; the rest are counted in one last finding. */
export const MAX_FINDINGS = 1000

function capFindings(list: PolicyFinding[]): PolicyFinding[] {
  if (list.length <= MAX_FINDINGS) return list
  return [
    ...list.slice(0, MAX_FINDINGS),
    {
      rule: list[MAX_FINDINGS].rule,
      path: null,
      detail: `…and ${list.length - MAX_FINDINGS} more changed files like the above`
    }
  ]
}

/** What changed in the `scripts` of a package.json, or null when nothing did. */
export async function scriptsChange(
  blobs: ChangedBlobs | undefined,
  readBlob: BlobReader
): Promise<string | null> {
  if (blobs === undefined) return 'the file could not be compared'
  let before: Record<string, unknown>
  let after: Record<string, unknown>
  try {
    before = scriptsOf(await readBlob(blobs.before))
    after = scriptsOf(await readBlob(blobs.after))
  } catch (error) {
    return `scripts cannot be compared: ${error instanceof Error ? error.message : String(error)}`
  }
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()
  const added = names.filter((n) => !(n in before))
  const removed = names.filter((n) => !(n in after))
  const changed = names.filter(
    (n) => n in before && n in after && JSON.stringify(before[n]) !== JSON.stringify(after[n])
  )
  if (added.length + removed.length + changed.length === 0) return null
  const list = (label: string, xs: string[]): string[] =>
    xs.length > 0 ? [`${label} ${xs.map((x) => JSON.stringify(x)).join(', ')}`] : []
  return [
    'scripts',
    [...list('added', added), ...list('removed', removed), ...list('changed', changed)].join('; ')
  ].join(' ')
}

function scriptsOf(data: Buffer | null): Record<string, unknown> {
  if (data === null) return {}
  let doc: unknown
  try {
    doc = JSON.parse(data.toString('utf8'))
  } catch {
    throw new Error('package.json is not valid JSON')
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new Error('package.json is not a JSON object')
  const scripts = (doc as Record<string, unknown>).scripts
  if (scripts === undefined) return {}
  if (typeof scripts !== 'object' || scripts === null || Array.isArray(scripts))
    throw new Error('"scripts" is not an object')
  return scripts as Record<string, unknown>
}
