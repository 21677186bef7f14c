import picomatch from 'picomatch'
import { parse as parseToml } from 'smol-toml'
import { DEPS_SUFFIX, GLOB_OPTIONS, SCRIPTS_SUFFIX, suffixOf } from '../path-rules.js'
import { git } from '../workspace/git.js'
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
  return keyChanges('scripts', before, after, Infinity)
}

/**
 * `KIND added "a"; removed "b"; changed "c"` over the keys of two maps (at most `cap` names per
 * list), or null when they hold the same keys and values.
 */
function keyChanges(
  kind: string,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  cap: number
): string | null {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()
  const added = names.filter((n) => !(n in before))
  const removed = names.filter((n) => !(n in after))
  const changed = names.filter(
    (n) => n in before && n in after && JSON.stringify(before[n]) !== JSON.stringify(after[n])
  )
  if (added.length + removed.length + changed.length === 0) return null
  const list = (label: string, xs: string[]): string[] =>
    xs.length > 0
      ? [
          `${label} ${xs
            .slice(0, cap)
            .map((x) => JSON.stringify(x))
            .join(', ')}${xs.length > cap ? ` and ${xs.length - cap} more` : ''}`
        ]
      : []
  return [
    kind,
    [...list('added', added), ...list('removed', removed), ...list('changed', changed)].join('; ')
  ].join(' ')
}

/** A package.json blob parsed as a JSON object ({} when absent). */
function packageJsonObject(data: Buffer | null): Record<string, unknown> {
  if (data === null) return {}
  let doc: unknown
  try {
    doc = JSON.parse(data.toString('utf8'))
  } catch {
    throw new Error('package.json is not valid JSON')
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new Error('package.json is not a JSON object')
  return doc as Record<string, unknown>
}

function scriptsOf(data: Buffer | null): Record<string, unknown> {
  const scripts = packageJsonObject(data).scripts
  if (scripts === undefined) return {}
  if (typeof scripts !== 'object' || scripts === null || Array.isArray(scripts))
    throw new Error('"scripts" is not an object')
  return scripts as Record<string, unknown>
}

/** The dependency tables of package.json (name → spec, per field). */
const PACKAGE_JSON_DEPENDENCY_FIELDS = [
  'dependencies',
  'devDependencies',
  'optionalDependencies',
  'peerDependencies',
  'bundleDependencies',
  'bundledDependencies',
  'overrides',
  'resolutions'
]

/**
 * What changed in the dependencies a manifest declares, or null when nothing did. package.json:
 * its dependency fields; pyproject.toml (parsed as TOML): `project.dependencies`,
 * `project.optional-dependencies`, `dependency-groups`, `build-system.requires` and Poetry's
 * dependency tables. A file that cannot be parsed is flagged, never assumed harmless; other file
 * names are compared whole.
 */
export async function dependenciesChange(
  filePath: string,
  blobs: ChangedBlobs | undefined,
  readBlob: BlobReader
): Promise<string | null> {
  if (blobs === undefined) return 'the file could not be compared'
  const name = filePath.slice(filePath.lastIndexOf('/') + 1)
  const extract =
    name === 'package.json'
      ? packageJsonDependencies
      : name === 'pyproject.toml'
        ? pyprojectDependencies
        : null
  let before: Record<string, unknown>
  let after: Record<string, unknown>
  try {
    const a = await readBlob(blobs.before)
    const b = await readBlob(blobs.after)
    if (extract === null) return a?.equals(b ?? Buffer.alloc(0)) ? null : 'the file changed'
    before = extract(a)
    after = extract(b)
  } catch (error) {
    return `dependencies cannot be compared: ${error instanceof Error ? error.message : String(error)}`
  }
  return keyChanges('dependencies', before, after, 20)
}

/** `field name` → spec, over every dependency field of a package.json. */
function packageJsonDependencies(data: Buffer | null): Record<string, unknown> {
  const doc = packageJsonObject(data)
  const out: Record<string, unknown> = {}
  for (const field of PACKAGE_JSON_DEPENDENCY_FIELDS) {
    const v = doc[field]
    if (v === undefined) continue
    if (Array.isArray(v)) {
      for (const n of v) out[`${field} ${String(n)}`] = true
    } else if (isTable(v)) {
      for (const [n, spec] of Object.entries(v)) out[`${field} ${n}`] = spec
    } else {
      out[field] = v
    }
  }
  return out
}

/** `table requirement-name` → requirement, over the dependency tables of a pyproject.toml. */
function pyprojectDependencies(data: Buffer | null): Record<string, unknown> {
  if (data === null) return {}
  let doc: Record<string, unknown>
  try {
    doc = parseToml(data.toString('utf8'))
  } catch (error) {
    throw new Error(
      `pyproject.toml is not valid TOML (${(error instanceof Error ? error.message : String(error)).split('\n')[0]})`
    )
  }
  const out: Record<string, unknown> = {}
  const at = (o: unknown, ...keys: string[]): unknown =>
    keys.reduce<unknown>((v, k) => (isTable(v) ? v[k] : undefined), o)
  const addList = (table: string, v: unknown): void => {
    if (v === undefined) return
    if (!Array.isArray(v)) {
      out[table] = v
      return
    }
    for (const req of v) {
      const text = typeof req === 'string' ? req : JSON.stringify(req)
      // PEP 508: the name comes first; the rest (version, markers) is the spec.
      const m = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(text)
      const key = `${table} ${m ? m[1].toLowerCase().replace(/[-_.]+/g, '-') : text}`
      out[key] = [...((out[key] as string[] | undefined) ?? []), text]
    }
  }
  const addTable = (table: string, v: unknown): void => {
    if (v === undefined) return
    if (!isTable(v)) {
      out[table] = v
      return
    }
    for (const [n, spec] of Object.entries(v)) out[`${table} ${n}`] = spec
  }
  addList('project.dependencies', at(doc, 'project', 'dependencies'))
  const optional = at(doc, 'project', 'optional-dependencies')
  if (isTable(optional))
    for (const [extra, list] of Object.entries(optional))
      addList(`project.optional-dependencies.${extra}`, list)
  else if (optional !== undefined) out['project.optional-dependencies'] = optional
  const groups = at(doc, 'dependency-groups')
  if (isTable(groups))
    for (const [g, list] of Object.entries(groups)) addList(`dependency-groups.${g}`, list)
  else if (groups !== undefined) out['dependency-groups'] = groups
  addList('build-system.requires', at(doc, 'build-system', 'requires'))
  addTable('tool.poetry.dependencies', at(doc, 'tool', 'poetry', 'dependencies'))
  addTable('tool.poetry.dev-dependencies', at(doc, 'tool', 'poetry', 'dev-dependencies'))
  const poetryGroups = at(doc, 'tool', 'poetry', 'group')
  if (isTable(poetryGroups))
    for (const [g, t] of Object.entries(poetryGroups))
      addTable(`tool.poetry.group.${g}.dependencies`, at(t, 'dependencies'))
  return out
}

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
