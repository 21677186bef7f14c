import ignore from 'ignore'
import type { Ignore } from 'ignore'
import { parseTreeListing } from '../git-listing.js'
import { git } from '../workspace/git.js'

/**
 * Which paths of the agent's tree are build output: the `.gitignore` rules of the tree the agent
 * started from (the base of the diff), matched as git matches them — nested files, the deepest
 * file with a matching rule decides, the last matching rule in a file wins, a folder that is
 * ignored is not looked into, case-sensitive, byte-wise. A path tracked in the base tree is never
 * ignored (as in git), also inside an ignored folder: a change to it is always in the diff.
 *
 * Below the base tree's rules lies a default list of tool caches and build output
 * (`DEFAULT_IGNORE`: pytest, mypy, ruff, tox and virtualenv folders, `__pycache__`, `node_modules`,
 * framework caches): it decides only where no `.gitignore` of the base tree has a matching rule, so
 * a repository re-includes one with a negated rule (`!.venv/`) in its own `.gitignore`.
 *
 * The rules come from the base tree only. A `.gitignore` the agent adds or edits changes nothing
 * for its own run (the change itself is in the diff and flagged). Neither the runner's
 * `core.excludesFile` nor a checkout's `.git/info/exclude` apply: they are not part of the
 * reviewed tree and would make the diff depend on the machine.
 */
export interface IgnoreRules {
  /** Whether the base tree has any rule at all. */
  readonly empty: boolean
  /**
   * `parts`: path components (latin1 strings, so every byte is kept); `dir`: the entry is a real
   * folder (not a symlink to one). null: not ignored.
   */
  match(parts: string[], dir: boolean): string | null
  /** Whether the base tree tracks this path (latin1) or anything below it. */
  tracked(path: string): boolean
}

export const NO_IGNORE_RULES: IgnoreRules = {
  empty: true,
  match: () => null,
  tracked: () => false
}

/**
 * Tool caches and build output left out of every diff unless the base tree's `.gitignore` says
 * otherwise (docs/report.md lists them). Patterns in `.gitignore` syntax without a slash inside:
 * each matches an entry's own name at any depth.
 */
export const DEFAULT_IGNORE: readonly string[] = [
  // Python
  '__pycache__/',
  '*.py[co]',
  '.pytest_cache/',
  '.mypy_cache/',
  '.ruff_cache/',
  '.pytype/',
  '.hypothesis/',
  '.tox/',
  '.nox/',
  '.venv/',
  '*.egg-info/',
  '.eggs/',
  '.coverage',
  '.coverage.*',
  'htmlcov/',
  // JavaScript
  'node_modules/',
  '.npm/',
  '.pnpm-store/',
  '.eslintcache',
  '.parcel-cache/',
  '.turbo/',
  '.next/',
  '.nuxt/',
  '.svelte-kit/',
  '.angular/',
  '*.tsbuildinfo',
  // Others
  '.gradle/',
  '.DS_Store'
]

/** Where a default rule is said to come from (report.json's ignored entries). */
export const DEFAULT_IGNORE_SOURCE = 'default tool-output list'

/** Cap on the rules read (a hostile head could carry huge `.gitignore` files). */
const MAX_RULE_BYTES = 1024 * 1024
const MAX_RULE_FILES = 10_000

interface RuleFile {
  /** Folder components (latin1) the file sits in. */
  dir: string[]
  source: string
  ig: Ignore
}

/** Reads every `.gitignore` blob of `tree` (symlinks are not followed, as git does not). */
export async function baseIgnoreRules(
  gitDir: string,
  tree: string,
  /** `ls-tree -r -t -z --full-tree` of `tree`, when the caller has it already. */
  given?: Buffer,
  /** The default list below the base tree's rules (none: the base tree's rules alone). */
  defaults: readonly string[] = DEFAULT_IGNORE
): Promise<IgnoreRules> {
  const listing =
    given ?? (await git(['ls-tree', '-r', '-t', '-z', '--full-tree', tree], { gitDir })).stdout
  const trackedPaths = new Set<string>()
  const wanted: { oid: string; path: string }[] = []
  for (const { mode, type, oid, path: raw } of parseTreeListing(listing)) {
    const p = raw.toString('latin1')
    trackedPaths.add(p)
    if (
      type === 'blob' &&
      mode !== '120000' &&
      (p === '.gitignore' || p.endsWith('/.gitignore')) &&
      wanted.length < MAX_RULE_FILES
    )
      wanted.push({ oid, path: p })
  }
  const files: RuleFile[] = []
  if (wanted.length > 0) {
    const out = (
      await git(['cat-file', '--batch'], {
        gitDir,
        input: wanted.map((w) => w.oid).join('\n') + '\n'
      })
    ).stdout
    let offset = 0
    for (const w of wanted) {
      const nl = out.indexOf(10, offset)
      const size = Number(out.subarray(offset, nl).toString('latin1').split(' ')[2])
      const data = out.subarray(nl + 1, nl + 1 + Math.min(size, MAX_RULE_BYTES))
      offset = nl + 1 + size + 1
      const dir = w.path.split('/').slice(0, -1)
      const ig = ignore({ ignorecase: false, allowRelativePaths: false })
      // One rule per line; a rule the library refuses is skipped (git would not match it either).
      for (const line of data.toString('latin1').split(/\r?\n/)) {
        try {
          ig.add(line)
        } catch {
          // ignore: an invalid pattern matches nothing
        }
      }
      files.push({ dir, source: w.path, ig })
    }
  }
  // Deepest first: the deepest file with a matching rule decides.
  files.sort((a, b) => b.dir.length - a.dir.length)
  const byDir = new Map<string, RuleFile>()
  for (const f of files) byDir.set(f.dir.join('/'), f)
  const fallback = ignore({ ignorecase: false, allowRelativePaths: false }).add([...defaults])

  return {
    empty: files.length === 0 && defaults.length === 0,
    tracked: (p) => trackedPaths.has(p),
    match(parts, isDir) {
      for (let depth = parts.length - 1; depth >= 0; depth--) {
        const f = byDir.get(parts.slice(0, depth).join('/'))
        if (!f) continue
        const rel = parts.slice(depth).join('/') + (isDir ? '/' : '')
        let r: ReturnType<Ignore['test']>
        try {
          r = f.ig.test(rel)
        } catch {
          continue
        }
        if (r.ignored) return `${r.rule?.pattern ?? '(parent folder)'} (${f.source})`
        if (r.unignored) return null
      }
      // No rule of the base tree decided: the default list, on the entry's own name (the walk
      // does not look into a folder it ignored, so a folder the base re-includes stays open).
      let r: ReturnType<Ignore['test']>
      try {
        r = fallback.test((parts[parts.length - 1] ?? '') + (isDir ? '/' : ''))
      } catch {
        return null
      }
      return r.ignored ? `${r.rule?.pattern ?? '(parent folder)'} (${DEFAULT_IGNORE_SOURCE})` : null
    }
  }
}

/**
 * A changed `.gitignore` (added, edited, deleted, anywhere): flagged for the reviewer, since it
 * decides what later runs leave out of their diffs. It does not change this run's rules.
 */
export function ignoreFindings(
  files: { path: string; status: string }[],
  snap: { ignoredTotal: number }
): { rule: string; path: string | null; detail: string }[] {
  return files
    .filter((f) => f.path === '.gitignore' || f.path.endsWith('/.gitignore'))
    .map((f) => ({
      rule: 'ignore-rules',
      path: f.path,
      detail: `${f.status}; this run applied the base tree's rules (${snap.ignoredTotal} path(s) left out as ignored); the change decides what later runs leave out`
    }))
}
