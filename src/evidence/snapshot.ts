import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import * as zlib from 'node:zlib'
import { git } from '../workspace/git.js'

export interface SnapshotLimits {
  maxFiles: number
  maxBytes: number
}

export const DEFAULT_SNAPSHOT_LIMITS: SnapshotLimits = {
  maxFiles: 100_000,
  maxBytes: 1024 * 1024 * 1024
}

export interface SkippedEntry {
  path: string
  reason: 'fifo' | 'socket' | 'device' | 'git-dir' | 'limit'
}

export interface Snapshot {
  tree: string
  files: number
  bytes: number
  skipped: SkippedEntry[]
  truncated: boolean
}

/** Shows a byte path as text: UTF-8 where valid, other bytes as \xNN. */
export function displayPath(p: Buffer): string {
  const text = p.toString('utf8')
  if (Buffer.from(text, 'utf8').equals(p)) return text
  let out = ''
  for (const byte of p)
    out +=
      byte >= 0x20 && byte < 0x7f
        ? String.fromCharCode(byte)
        : `\\x${byte.toString(16).padStart(2, '0')}`
  return out
}

interface Found {
  parts: Buffer[]
  rel: Buffer
  /** Absolute path as bytes (names that are not UTF-8 stay intact). */
  abs: Buffer
  kind: 'file' | 'link'
  executable: boolean
  size: number
}

/**
 * Records the workspace as a git tree in the private repository, reading it as hostile input:
 * `lstat` only (symlinks are stored as links, never followed), no FIFOs, sockets or devices
 * opened, `.git` folders the agent made are not taken, names kept as raw bytes. Blob and tree
 * objects are written directly (no `git add`, no index, so no attributes, filters or hooks
 * apply). Every file is read and hashed: no stat cache is trusted, since the agent controls
 * mtimes, sizes and inodes.
 * Blobs already in `knownTree` (the base) are not written again.
 *
 * The file system is read with synchronous calls: for many small files this is several times
 * faster than a round trip through libuv's thread pool per call, and nothing else runs meanwhile.
 */
export async function snapshotWorkspace(
  dir: string,
  gitDir: string,
  limits: SnapshotLimits = DEFAULT_SNAPSHOT_LIMITS,
  knownTree?: string
): Promise<Snapshot> {
  const skipped: SkippedEntry[] = []
  let truncated = false
  const objects = path.join(gitDir, 'objects')
  const known = knownTree === undefined ? new Set<string>() : await objectIds(gitDir, knownTree)
  const written = new Set<string>()
  const madeDirs = new Set<string>()

  const writeObject = (type: string, data: Buffer): string => {
    const header = Buffer.from(`${type} ${data.length}\0`)
    const oid = createHash('sha1').update(header).update(data).digest('hex')
    if (!known.has(oid) && !written.has(oid)) {
      written.add(oid)
      const file = path.join(objects, oid.slice(0, 2), oid.slice(2))
      if (!fs.existsSync(file)) {
        const fanout = oid.slice(0, 2)
        if (!madeDirs.has(fanout)) {
          fs.mkdirSync(path.dirname(file), { recursive: true })
          madeDirs.add(fanout)
        }
        const tmp = `${file}.tmp-${process.pid}`
        fs.writeFileSync(tmp, zlib.deflateSync(Buffer.concat([header, data]), { level: 1 }))
        fs.renameSync(tmp, file)
      }
    }
    return oid
  }

  // 1. Walk (lstat only), in a stable order.
  const found: Found[] = []
  const slash = Buffer.from('/')
  const walk = (rel: Buffer | undefined, parts: Buffer[]): void => {
    const abs = rel === undefined ? Buffer.from(dir) : Buffer.concat([Buffer.from(dir + '/'), rel])
    const names = fs.readdirSync(abs, { encoding: 'buffer' }).sort((a, b) => Buffer.compare(a, b))
    for (const name of names) {
      const childRel = rel === undefined ? name : Buffer.concat([rel, slash, name])
      const childAbs = Buffer.concat([abs, slash, name])
      if (name.toString('latin1') === '.git') {
        skipped.push({ path: displayPath(childRel), reason: 'git-dir' })
        continue
      }
      const st = fs.lstatSync(childAbs)
      if (st.isDirectory()) {
        walk(childRel, [...parts, name])
        continue
      }
      if (st.isFIFO() || st.isSocket() || st.isBlockDevice() || st.isCharacterDevice()) {
        const reason = st.isFIFO() ? 'fifo' : st.isSocket() ? 'socket' : 'device'
        skipped.push({ path: displayPath(childRel), reason })
        continue
      }
      found.push({
        parts: [...parts, name],
        rel: childRel,
        abs: childAbs,
        kind: st.isSymbolicLink() ? 'link' : 'file',
        executable: (st.mode & 0o100) !== 0,
        size: st.size
      })
    }
  }
  walk(undefined, [])

  // 2. Limits, in walk order; 3. read, hash and store.
  const entries: Entry[] = []
  let bytes = 0
  let total = 0
  for (const f of found) {
    if (entries.length >= limits.maxFiles || bytes + f.size > limits.maxBytes) {
      truncated = true
      skipped.push({ path: displayPath(f.rel), reason: 'limit' })
      continue
    }
    bytes += f.size
    const data =
      f.kind === 'link' ? fs.readlinkSync(f.abs, { encoding: 'buffer' }) : readRegularFile(f.abs)
    total += data.length
    const mode = f.kind === 'link' ? '120000' : f.executable ? '100755' : '100644'
    entries.push({ parts: f.parts, mode, oid: writeObject('blob', data) })
  }

  const tree = writeTrees(entries, writeObject)
  return { tree, files: entries.length, bytes: total, skipped, truncated }
}

interface Entry {
  /** Path components, raw bytes. */
  parts: Buffer[]
  mode: string
  oid: string
}

interface Dir {
  files: Map<string, { name: Buffer; mode: string; oid: string }>
  dirs: Map<string, { name: Buffer; dir: Dir }>
}

/**
 * Writes the tree objects for `entries` (what `git write-tree` would write for the same index)
 * and returns the root tree id. Entries are ordered as git orders them: by name bytes, a folder
 * compared as if its name ended in '/'.
 */
function writeTrees(entries: Entry[], writeObject: (type: string, data: Buffer) => string): string {
  const root: Dir = { files: new Map(), dirs: new Map() }
  for (const e of entries) {
    let d = root
    for (const part of e.parts.slice(0, -1)) {
      const key = part.toString('latin1')
      let child = d.dirs.get(key)
      if (!child) {
        child = { name: part, dir: { files: new Map(), dirs: new Map() } }
        d.dirs.set(key, child)
      }
      d = child.dir
    }
    const name = e.parts[e.parts.length - 1]
    d.files.set(name.toString('latin1'), { name, mode: e.mode, oid: e.oid })
  }
  const write = (d: Dir): string => {
    const items: { sortKey: Buffer; bytes: Buffer }[] = []
    for (const f of d.files.values()) {
      items.push({
        sortKey: f.name,
        bytes: Buffer.concat([
          Buffer.from(`${f.mode} `),
          f.name,
          Buffer.from([0]),
          Buffer.from(f.oid, 'hex')
        ])
      })
    }
    for (const sub of d.dirs.values()) {
      const oid = write(sub.dir)
      items.push({
        sortKey: Buffer.concat([sub.name, Buffer.from('/')]),
        bytes: Buffer.concat([
          Buffer.from('40000 '),
          sub.name,
          Buffer.from([0]),
          Buffer.from(oid, 'hex')
        ])
      })
    }
    items.sort((x, y) => Buffer.compare(x.sortKey, y.sortKey))
    return writeObject('tree', Buffer.concat(items.map((i) => i.bytes)))
  }
  return write(root)
}

/** The blob and tree ids under a tree (all of them are in the object store already). */
async function objectIds(gitDir: string, tree: string): Promise<Set<string>> {
  const out = (await git(['ls-tree', '-r', '-t', '-z', '--full-tree', tree], { gitDir })).stdout
  const ids = new Set<string>()
  let start = 0
  while (start < out.length) {
    const end = out.indexOf(0, start)
    const rec = out.subarray(start, end < 0 ? out.length : end).toString('latin1')
    start = end < 0 ? out.length : end + 1
    const [, type, oid] = rec.slice(0, rec.indexOf('\t')).split(' ')
    if (type === 'blob' || type === 'tree') ids.add(oid)
  }
  return ids
}

/** Opens without following a final symlink and refuses anything that is not a regular file. */
function readRegularFile(p: Buffer): Buffer {
  const fd = fs.openSync(
    p,
    fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK
  )
  try {
    const st = fs.fstatSync(fd)
    if (!st.isFile()) throw new Error(`${p.toString('utf8')} is not a regular file`)
    const data = Buffer.allocUnsafe(st.size)
    let off = 0
    while (off < st.size) {
      const n = fs.readSync(fd, data, off, st.size - off, off)
      if (n === 0) break
      off += n
    }
    return off === st.size ? data : data.subarray(0, off)
  } finally {
    fs.closeSync(fd)
  }
}
