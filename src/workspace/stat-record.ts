// The stat record of a freshly written workspace: for each file we wrote, what the kernel said
// about it right after the write, and the blob id of what we wrote. The snapshot takes a file's
// blob id from here, without reading it, only when the file's stat data is still exactly the
// same. The key holds only what no process in the sandbox can choose:
//
// - ctime: the kernel sets it to the current time on every change of contents or metadata
//   (write, truncate, a write through mmap, chmod, chown, utimes, link, rename); setting it to
//   another value needs the clock (CAP_SYS_TIME), which the sandbox never has;
// - device and inode: a file put in the place of another (rename, hard link) has its own inode,
//   and a new inode gets a new ctime anyway;
// - size and mode (file type and permission bits).
//
// mtime is not part of it: any process that may write a file may set its mtime (`touch -d`).
// Timestamps are coarse (a clock tick), so a change made within the same tick as our write could
// keep ctime: a record counts only when its ctime is before that of a marker file written after
// the whole workspace (`trustBefore`); whatever touches the workspace afterwards gets a ctime at
// or past the marker's.
import * as fs from 'node:fs'
import * as path from 'node:path'

/** What a file's record is compared on (nanosecond ctime, 64-bit device and inode numbers). */
export interface StatKey {
  dev: bigint
  ino: bigint
  mode: bigint
  size: bigint
  ctimeNs: bigint
}

export interface StatRecord {
  /** Workspace-relative paths as latin1 strings of their raw bytes → key and blob id. */
  entries: Map<string, { key: StatKey; oid: string }>
  /** The tree that was written, and the ids of every blob and subtree in it (all in the store). */
  tree?: string
  known?: Set<string>
  /** That tree's `ls-tree -r -t -z --full-tree` output (the base's .gitignore rules come from it). */
  listing?: Buffer
}

/** An empty record: every file is read. */
export const NO_STAT_RECORD: StatRecord = { entries: new Map() }

/** The key of `lstat(…, { bigint: true })` (mtime and atime deliberately left out). */
export function statKey(
  st: Pick<fs.BigIntStats, 'dev' | 'ino' | 'mode' | 'size' | 'ctimeNs'>
): StatKey {
  return { dev: st.dev, ino: st.ino, mode: st.mode, size: st.size, ctimeNs: st.ctimeNs }
}

export function sameKey(a: StatKey, b: StatKey): boolean {
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.mode === b.mode &&
    a.size === b.size &&
    a.ctimeNs === b.ctimeNs
  )
}

/** The blob id recorded for `rel` when its stat data now is exactly what was recorded. */
export function recordedOid(record: StatRecord, rel: string, now: StatKey): string | undefined {
  const e = record.entries.get(rel)
  return e !== undefined && sameKey(e.key, now) ? e.oid : undefined
}

/**
 * Collects records while a workspace is written; `seal` keeps those whose ctime is strictly
 * before `markerCtimeNs` (the ctime of a file written after all of them).
 */
export class StatRecorder {
  private readonly pending = new Map<string, { key: StatKey; oid: string }>()
  /** The ids of the tree's blobs and subtrees, and the tree itself, once known. */
  readonly known = new Set<string>()
  tree: string | undefined
  listing: Buffer | undefined

  add(rel: string, st: fs.BigIntStats, oid: string): void {
    this.pending.set(rel, { key: statKey(st), oid })
  }

  get latestCtimeNs(): bigint {
    let latest = 0n
    for (const e of this.pending.values()) if (e.key.ctimeNs > latest) latest = e.key.ctimeNs
    return latest
  }

  seal(markerCtimeNs: bigint): StatRecord {
    const entries = new Map<string, { key: StatKey; oid: string }>()
    for (const [rel, e] of this.pending) if (e.key.ctimeNs < markerCtimeNs) entries.set(rel, e)
    if (this.tree === undefined) return { entries }
    const known = new Set([...this.known, this.tree])
    return { entries, tree: this.tree, known, ...(this.listing ? { listing: this.listing } : {}) }
  }
}

/**
 * Writes a marker file in `dir` (outside the workspace, same file system) until its ctime is past
 * `latestCtimeNs` (one clock tick at most), and returns that ctime; 0 when it cannot be written.
 */
export async function markerCtime(dir: string, latestCtimeNs: bigint): Promise<bigint> {
  const marker = path.join(dir, 'stat-record-marker')
  let ctime = 0n
  try {
    for (let attempt = 0; attempt < 20; attempt++) {
      fs.writeFileSync(marker, String(attempt))
      ctime = fs.lstatSync(marker, { bigint: true }).ctimeNs
      if (ctime > latestCtimeNs) break
      await new Promise((r) => setTimeout(r, 2))
    }
  } catch {
    return 0n // no marker (a full workspace filesystem): no record is trusted, every file is read
  }
  return ctime
}
