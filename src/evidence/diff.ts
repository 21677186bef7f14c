import { git } from '../workspace/git.js'
import { displayPath } from './snapshot.js'

export type FileStatus = 'added' | 'modified' | 'deleted' | 'type-changed'

export interface ChangedFile {
  path: string
  status: FileStatus
  additions: number
  deletions: number
  binary: boolean
  /** git file mode after the change ('000000' when deleted). */
  mode: string
}

export interface DiffResult {
  patch: Buffer
  files: ChangedFile[]
  truncated: boolean
}

export const DEFAULT_MAX_PATCH_BYTES = 20 * 1024 * 1024

const STATUS: Record<string, FileStatus> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  T: 'type-changed'
}

/**
 * The change between two trees of the private repository, as a patch that `git apply` takes
 * (binary files as binary patches) and a per-file list. Tree to tree in a bare repository: no
 * worktree attributes, no textconv, no external diff, no renames guessed.
 */
export async function diffTrees(
  gitDir: string,
  baseTree: string,
  headTree: string,
  maxPatchBytes = DEFAULT_MAX_PATCH_BYTES
): Promise<DiffResult> {
  const common = [
    '-r',
    '--no-renames',
    '--no-ext-diff',
    '--no-textconv',
    '--no-color',
    '--full-index'
  ]
  const summary = await git(
    ['diff-tree', ...common, '-z', '--raw', '--numstat', baseTree, headTree],
    { gitDir }
  )
  const files = parseRawNumstat(summary.stdout)
  const patch = await git(['diff-tree', ...common, '-p', '--binary', baseTree, headTree], {
    gitDir,
    maxStdout: maxPatchBytes
  })
  return { patch: patch.stdout, files, truncated: patch.truncated }
}

/** Parses `diff-tree -z --raw --numstat` output (raw records first, then numstat records). */
export function parseRawNumstat(out: Buffer): ChangedFile[] {
  const fields: Buffer[] = []
  let start = 0
  while (start < out.length) {
    const end = out.indexOf(0, start)
    if (end < 0) {
      fields.push(out.subarray(start))
      break
    }
    fields.push(out.subarray(start, end))
    start = end + 1
  }
  const byPath = new Map<string, ChangedFile>()
  const order: string[] = []
  let i = 0
  while (i < fields.length) {
    const f = fields[i].toString('latin1')
    if (f.startsWith(':')) {
      const [, dstMode, , , status] = f.slice(1).split(' ')
      const p = fields[i + 1]
      const key = p.toString('latin1')
      byPath.set(key, {
        path: displayPath(p),
        status: STATUS[status[0]] ?? 'modified',
        additions: 0,
        deletions: 0,
        binary: false,
        mode: dstMode
      })
      order.push(key)
      i += 2
      continue
    }
    const m = /^(-|\d+)\t(-|\d+)\t/.exec(f)
    if (m) {
      const key = fields[i].subarray(m[0].length).toString('latin1')
      const entry = byPath.get(key)
      if (entry) {
        entry.binary = m[1] === '-'
        entry.additions = m[1] === '-' ? 0 : Number(m[1])
        entry.deletions = m[2] === '-' ? 0 : Number(m[2])
      }
    }
    i++
  }
  return order.map((k) => byPath.get(k) as ChangedFile)
}
