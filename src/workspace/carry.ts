import * as fs from 'node:fs'

/**
 * Moves entries (raw relative paths, as the snapshot found them) from one workspace copy into
 * another: the build output that the diff leaves out (ignored paths) goes along with the tree
 * that is materialized for a fresh run of the tests. Nothing runs in either folder meanwhile.
 *
 * Hostile input: every folder on the way, on both sides, must be a real folder (lstat), so a
 * symlink that the tests put in the place of a parent folder after the snapshot cannot move a
 * host file into the copy; an entry that is itself a symlink is moved as the link (rename never
 * follows the last component). Entries that are no longer there, or whose place in the copy is
 * taken, are skipped. Returns how many were moved.
 */
export function carryEntries(
  fromDir: string,
  toDir: string,
  entries: Buffer[],
  /** `copy`: the entries stay in `fromDir` too (symlinks copied as links, never followed). */
  how: 'move' | 'copy' = 'move'
): number {
  let moved = 0
  const slash = Buffer.from('/')
  for (const rel of entries) {
    const parts: Buffer[] = []
    let start = 0
    for (let i = 0; i <= rel.length; i++) {
      if (i === rel.length || rel[i] === 0x2f) {
        parts.push(rel.subarray(start, i))
        start = i + 1
      }
    }
    if (
      parts.some((p) => p.length === 0 || p.equals(Buffer.from('..')) || p.equals(Buffer.from('.')))
    )
      continue
    const parentsOk = (root: string, create: boolean): boolean => {
      let at = Buffer.from(root)
      for (const p of parts.slice(0, -1)) {
        at = Buffer.concat([at, slash, p])
        const st = lstatOrNull(at)
        if (st === null && create) {
          fs.mkdirSync(at, { mode: 0o755 })
          continue
        }
        if (st === null || !st.isDirectory()) return false
      }
      return true
    }
    const src = Buffer.concat([Buffer.from(fromDir), slash, rel])
    const dst = Buffer.concat([Buffer.from(toDir), slash, rel])
    if (!parentsOk(fromDir, false) || lstatOrNull(src) === null) continue
    if (!parentsOk(toDir, true) || lstatOrNull(dst) !== null) continue
    if (how === 'move') fs.renameSync(src, dst)
    else copyEntry(src, dst)
    moved++
  }
  return moved
}

/**
 * Copies one entry by its raw path: folders, regular files (with their mode bits) and symlinks
 * as links; FIFOs, sockets and devices are left out, never opened.
 */
function copyEntry(src: Buffer, dst: Buffer): void {
  const st = fs.lstatSync(src)
  if (st.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(src, { encoding: 'buffer' }), dst)
  else if (st.isFile()) {
    fs.copyFileSync(src, dst, fs.constants.COPYFILE_EXCL)
    fs.chmodSync(dst, st.mode & 0o777)
  } else if (st.isDirectory()) {
    fs.mkdirSync(dst, { mode: 0o755 })
    const slash = Buffer.from('/')
    for (const name of fs.readdirSync(src, { encoding: 'buffer' }))
      copyEntry(Buffer.concat([src, slash, name]), Buffer.concat([dst, slash, name]))
  }
}

function lstatOrNull(p: Buffer): fs.Stats | null {
  try {
    return fs.lstatSync(p)
  } catch {
    return null
  }
}

/**
 * Copies a workspace folder as it is (the install phase's result, for the baseline's copy):
 * folders, regular files (with their executable bit) and symlinks as links; FIFOs, sockets and
 * devices are left out, never opened. Nothing runs in either folder meanwhile.
 */
export function copyWorkspace(fromDir: string, toDir: string): void {
  fs.cpSync(fromDir, toDir, {
    recursive: true,
    verbatimSymlinks: true,
    dereference: false,
    errorOnExist: false,
    force: true,
    preserveTimestamps: false,
    filter: (src) => {
      const st = fs.lstatSync(src)
      return st.isDirectory() || st.isFile() || st.isSymbolicLink()
    }
  })
}
