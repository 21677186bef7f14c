// Reading an opened file whole, by position: the loop every reader of hostile files shares.
import * as fs from 'node:fs'

/** Up to `size` bytes of `fd` from its start (fewer when the file shrank meanwhile). */
export function readWhole(fd: number, size: number): Buffer {
  const data = Buffer.allocUnsafe(size)
  let off = 0
  while (off < size) {
    const n = fs.readSync(fd, data, off, size - off, off)
    if (n === 0) break
    off += n
  }
  return off === size ? data : data.subarray(0, off)
}
