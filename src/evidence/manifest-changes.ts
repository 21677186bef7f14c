// What a change does to the parts of a manifest that `GLOB#scripts` and `GLOB#dependencies`
// protect: the `scripts` of package.json, the dependency lists of package.json and
// pyproject.toml. Both versions are parsed; a file that cannot be parsed is reported as such.
import { parse as parseToml } from 'smol-toml'
import type { BlobReader } from './blobs.js'
import type { ChangedBlobs } from './diff.js'
import { isPlainObject } from '../plain-object.js'

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
    } else if (isPlainObject(v)) {
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
    keys.reduce<unknown>((v, k) => (isPlainObject(v) ? v[k] : undefined), o)
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
    if (!isPlainObject(v)) {
      out[table] = v
      return
    }
    for (const [n, spec] of Object.entries(v)) out[`${table} ${n}`] = spec
  }
  addList('project.dependencies', at(doc, 'project', 'dependencies'))
  const optional = at(doc, 'project', 'optional-dependencies')
  if (isPlainObject(optional))
    for (const [extra, list] of Object.entries(optional))
      addList(`project.optional-dependencies.${extra}`, list)
  else if (optional !== undefined) out['project.optional-dependencies'] = optional
  const groups = at(doc, 'dependency-groups')
  if (isPlainObject(groups))
    for (const [g, list] of Object.entries(groups)) addList(`dependency-groups.${g}`, list)
  else if (groups !== undefined) out['dependency-groups'] = groups
  addList('build-system.requires', at(doc, 'build-system', 'requires'))
  addTable('tool.poetry.dependencies', at(doc, 'tool', 'poetry', 'dependencies'))
  addTable('tool.poetry.dev-dependencies', at(doc, 'tool', 'poetry', 'dev-dependencies'))
  const poetryGroups = at(doc, 'tool', 'poetry', 'group')
  if (isPlainObject(poetryGroups))
    for (const [g, t] of Object.entries(poetryGroups))
      addTable(`tool.poetry.group.${g}.dependencies`, at(t, 'dependencies'))
  return out
}
