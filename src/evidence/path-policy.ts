import picomatch from 'picomatch'
import { DEPS_SUFFIX, GLOB_OPTIONS, SCRIPTS_SUFFIX, suffixOf } from '../path-rules.js'
import type { BlobReader } from './blobs.js'
import { dependenciesChange, scriptsChange } from './manifest-changes.js'
import type { ChangedBlobs, ChangedFile } from './diff.js'

/**
 * Which paths the agent may change (`allowed-paths`) and which changes need a human's explicit
 * approval (`protected-paths`). Patterns are globs matched with picomatch: `**` crosses folders,
 * dotfiles match, and a pattern without `/` matches the file name in any folder (like
 * .gitignore). `GLOB#scripts` protects the `scripts` object of matching package.json files
 * rather than the whole file; `GLOB#dependencies` the dependency lists of matching package.json
 * and pyproject.toml files.
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
    .filter((p) => suffixOf(p) === null)
    .map((p) => ({ pattern: p, match: matcher(p) }))
  const partial = (suffix: string): { pattern: string; match: (p: string) => boolean }[] =>
    policy.protected
      .filter((p) => p.endsWith(suffix))
      .map((p) => ({ pattern: p, match: matcher(p.slice(0, -suffix.length)) }))
  const scripts = partial(SCRIPTS_SUFFIX)
  const deps = partial(DEPS_SUFFIX)
  // A rename is a deletion and an addition of the same blob (the diff guesses no renames).
  const addedBy = new Map<string, string>()
  const deletedBy = new Map<string, string>()
  for (const [i, f] of files.entries()) {
    const b = blobs[i]
    if (b === undefined) continue
    if (f.status === 'added') addedBy.set(b.after, f.path)
    if (f.status === 'deleted') deletedBy.set(b.before, f.path)
  }
  const renameNote = (i: number, f: ChangedFile): string => {
    const b = blobs[i]
    if (b === undefined) return ''
    if (f.status === 'deleted' && addedBy.has(b.before))
      return ` (renamed to ${addedBy.get(b.before) as string})`
    if (f.status === 'added' && deletedBy.has(b.after))
      return ` (renamed from ${deletedBy.get(b.after) as string})`
    return ''
  }

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
        detail: `${f.status}${renameNote(i, f)}; matches ${hit.pattern}`
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
    const depRule = deps.find((s) => s.match(f.path))
    if (depRule) {
      const change = await dependenciesChange(f.path, blobs[i], readBlob)
      if (change !== null)
        flagged.push({
          rule: 'dependencies',
          path: f.path,
          detail: `${change}; matches ${depRule.pattern}`
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
