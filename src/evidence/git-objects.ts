// Writing git objects straight into a repository's object store: loose blobs and trees, the way
// `git hash-object -w` and `git write-tree` would, with no index, attributes or filters involved.
import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import * as zlib from 'node:zlib'
import { parseTreeListing } from '../git-listing.js'
import { git } from '../workspace/git.js'

export type WriteObject = (type: 'blob' | 'tree', data: Buffer) => string

/**
 * A writer of loose objects into `gitDir`; objects whose id is in `known` (already in the store
 * or its alternates) or already in the folder are not written again. Returns each object's id.
 */
export function objectWriter(gitDir: string, known: Set<string>): WriteObject {
  const objects = path.join(gitDir, 'objects')
  const written = new Set<string>()
  const madeDirs = new Set<string>()
  return (type, data) => {
    const header = Buffer.from(`${type} ${data.length}\0`)
    const oid = createHash('sha1').update(header).update(data).digest('hex')
    if (known.has(oid) || written.has(oid)) return oid
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
    return oid
  }
}

export interface TreeEntry {
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
export function writeTrees(entries: TreeEntry[], writeObject: WriteObject): string {
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
export async function objectIds(gitDir: string, tree: string): Promise<Set<string>> {
  const out = (await git(['ls-tree', '-r', '-t', '-z', '--full-tree', tree], { gitDir })).stdout
  const ids = new Set<string>()
  for (const e of parseTreeListing(out)) if (e.type === 'blob' || e.type === 'tree') ids.add(e.oid)
  return ids
}
