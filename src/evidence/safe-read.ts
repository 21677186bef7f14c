import * as fs from 'node:fs'
import * as path from 'node:path'

export type SafeRead =
  | { ok: true; data: Buffer; truncated: boolean }
  | {
      ok: false
      reason: 'missing' | 'symlink' | 'not-a-file' | 'outside' | 'error'
      detail: string
    }

/**
 * Reads `rel` under `root` as hostile input: every component is checked with lstat (no symlink
 * is followed, not even inside the tree), the file is opened with O_NOFOLLOW|O_NONBLOCK so a FIFO
 * cannot block, anything but a regular file is refused, and at most `maxBytes` are read.
 */
export async function readInside(root: string, rel: string, maxBytes: number): Promise<SafeRead> {
  const norm = path.posix.normalize(rel)
  if (path.posix.isAbsolute(norm) || norm === '..' || norm.startsWith('../')) {
    return { ok: false, reason: 'outside', detail: `${rel} is not inside the workspace` }
  }
  let current = root
  const parts = norm.split('/')
  for (let i = 0; i < parts.length; i++) {
    current = path.join(current, parts[i])
    let st: fs.Stats
    try {
      st = await fs.promises.lstat(current)
    } catch {
      return { ok: false, reason: 'missing', detail: `${rel} does not exist` }
    }
    if (st.isSymbolicLink())
      return { ok: false, reason: 'symlink', detail: `${rel} goes through a symlink; not followed` }
    if (i < parts.length - 1 && !st.isDirectory())
      return { ok: false, reason: 'missing', detail: `${rel} does not exist` }
  }
  let fh: fs.promises.FileHandle | undefined
  try {
    fh = await fs.promises.open(
      current,
      fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK
    )
    const st = await fh.stat()
    if (!st.isFile())
      return { ok: false, reason: 'not-a-file', detail: `${rel} is not a regular file` }
    const size = Math.min(st.size, maxBytes)
    const data = Buffer.alloc(size)
    const { bytesRead } = await fh.read(data, 0, size, 0)
    return { ok: true, data: data.subarray(0, bytesRead), truncated: st.size > maxBytes }
  } catch (error) {
    return {
      ok: false,
      reason: 'error',
      detail: `${rel}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`
    }
  } finally {
    await fh?.close()
  }
}
