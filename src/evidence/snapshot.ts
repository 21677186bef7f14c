import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { promisify } from 'node:util'
import * as zlib from 'node:zlib'
import { git } from '../workspace/git.js'

const deflate = promisify(zlib.deflate)

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

/**
 * Records the workspace as a git tree in the private repository, reading it as hostile input:
 * `lstat` only (symlinks are stored as links, never followed), no FIFOs, sockets or devices
 * opened, `.git` folders the agent made are not taken, names kept as raw bytes. Blob objects are
 * written directly (no `git add`, so no attributes, filters or hooks apply).
 */
export async function snapshotWorkspace(
  dir: string,
  gitDir: string,
  limits: SnapshotLimits = DEFAULT_SNAPSHOT_LIMITS
): Promise<Snapshot> {
  const index: Buffer[] = []
  const skipped: SkippedEntry[] = []
  let files = 0
  let bytes = 0
  let truncated = false
  const written = new Set<string>()
  const objects = path.join(gitDir, 'objects')

  const writeBlob = async (data: Buffer): Promise<string> => {
    const header = Buffer.from(`blob ${data.length}\0`)
    const oid = createHash('sha1').update(header).update(data).digest('hex')
    if (!written.has(oid)) {
      written.add(oid)
      const file = path.join(objects, oid.slice(0, 2), oid.slice(2))
      if (!fs.existsSync(file)) {
        await fs.promises.mkdir(path.dirname(file), { recursive: true })
        await fs.promises.writeFile(
          file,
          await deflate(Buffer.concat([header, data]), { level: 1 })
        )
      }
    }
    return oid
  }

  const walk = async (rel: Buffer | undefined): Promise<void> => {
    const abs = rel === undefined ? Buffer.from(dir) : Buffer.concat([Buffer.from(dir + '/'), rel])
    const names = (
      await fs.promises.readdir(abs as unknown as string, { encoding: 'buffer' })
    ).sort(Buffer.compare)
    for (const name of names) {
      const childRel = rel === undefined ? name : Buffer.concat([rel, Buffer.from('/'), name])
      const childAbs = Buffer.concat([abs, Buffer.from('/'), name]) as unknown as string
      const st = await fs.promises.lstat(childAbs)
      if (name.toString('latin1') === '.git') {
        skipped.push({ path: displayPath(childRel), reason: 'git-dir' })
        continue
      }
      if (st.isDirectory()) {
        await walk(childRel)
        continue
      }
      if (st.isFIFO() || st.isSocket() || st.isBlockDevice() || st.isCharacterDevice()) {
        const reason = st.isFIFO() ? 'fifo' : st.isSocket() ? 'socket' : 'device'
        skipped.push({ path: displayPath(childRel), reason })
        continue
      }
      if (files >= limits.maxFiles || bytes + st.size > limits.maxBytes) {
        truncated = true
        skipped.push({ path: displayPath(childRel), reason: 'limit' })
        continue
      }
      let mode: string
      let data: Buffer
      if (st.isSymbolicLink()) {
        mode = '120000'
        data = await fs.promises.readlink(childAbs, { encoding: 'buffer' })
      } else {
        mode = st.mode & 0o100 ? '100755' : '100644'
        data = await readRegularFile(childAbs)
      }
      files++
      bytes += data.length
      const oid = await writeBlob(data)
      index.push(Buffer.concat([Buffer.from(`${mode} ${oid}\t`), childRel, Buffer.from([0])]))
    }
  }
  await walk(undefined)

  const indexFile = path.join(gitDir, `airlock-index-${process.pid}-${Date.now()}`)
  try {
    await git(['update-index', '-z', '--index-info'], {
      gitDir,
      indexFile,
      input: Buffer.concat(index)
    })
    const tree = (await git(['write-tree'], { gitDir, indexFile })).stdout.toString('utf8').trim()
    return { tree, files, bytes, skipped, truncated }
  } finally {
    await fs.promises.rm(indexFile, { force: true })
  }
}

/** Opens without following a final symlink and refuses anything that is not a regular file. */
async function readRegularFile(p: string): Promise<Buffer> {
  const fh = await fs.promises.open(
    p,
    fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK
  )
  try {
    const st = await fh.stat()
    if (!st.isFile()) throw new Error(`${p} is not a regular file`)
    return await fh.readFile()
  } finally {
    await fh.close()
  }
}
