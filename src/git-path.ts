// Paths checked the way git checks them before it writes a file (`verify_path` with
// `core.protectHFS` and `core.protectNTFS` on): every write of a tree path — the workspace and its
// copies, the snapshot of the agent's result, apply — asks here first.
import * as path from 'node:path'

/**
 * Code points HFS+ ignores when it compares names, and every other default-ignorable one: a name
 * that is `.git` once they are removed is `.git` on some filesystem.
 */
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu

/** `.git` as NTFS sees it: any case, trailing dots and spaces, an alternate stream, `git~1`. */
const NTFS_DOTGIT = /^(?:\.git|git~\d+)[. ]*(?::.*)?$/i

/** Whether one path component names the repository's `.git` on some filesystem. */
export function isDotGitAlias(component: string): boolean {
  const folded = component.replace(IGNORABLE, '')
  if (folded.toLowerCase() === '.git') return true // HFS: case and ignorable code points
  // NTFS: `\` separates components too.
  return component.split('\\').some((part) => NTFS_DOTGIT.test(part.replace(IGNORABLE, '')))
}

/**
 * Why a tree path must not be written, or null: it is empty or absolute, or a component is empty,
 * `.`, `..`, or a `.git` alias. The path comes as git stored it (raw bytes or text).
 */
export function treePathProblem(p: Buffer | string): string | null {
  const text = typeof p === 'string' ? p : p.toString('utf8')
  if (text === '') return 'is empty'
  if (text.includes('\0')) return 'contains a NUL byte'
  if (text.startsWith('/')) return 'is absolute'
  for (const c of text.split('/')) {
    if (c === '') return 'has an empty component (//)'
    if (c === '.' || c === '..') return `has a "${c}" component`
    if (isDotGitAlias(c)) return `has a component that is .git on some filesystem ("${c}")`
  }
  return null
}

/** Whether `target`, resolved, stays strictly inside `root`. */
export function staysInside(root: string, target: string): boolean {
  const rel = path.relative(path.resolve(root), path.resolve(root, target))
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)
}

/** A path of a tree that must not be written: `.`, `..`, `.git` aliases, out of its root. */
export interface UnsafePath {
  path: string
  problem: string
}

/**
 * A tree (of the pull request, or of an agent's result) holds paths that must not be written.
 * Nothing was written; the run ends as a policy violation naming them.
 */
export class UnsafePathError extends Error {
  constructor(
    readonly where: string,
    readonly paths: UnsafePath[]
  ) {
    super(
      `${where} holds ${paths.length} path(s) that are not written: ${paths
        .slice(0, 5)
        .map((p) => `${JSON.stringify(p.path)} (${p.problem})`)
        .join(', ')}${paths.length > 5 ? ', …' : ''}`
    )
    this.name = 'UnsafePathError'
  }
}
