// Blobs of the private repository the evidence is taken from, read with a size cap.
import { git } from '../workspace/git.js'

/** Reads a blob of the private repository (null for the all-zero id of a missing side). */
export type BlobReader = (oid: string) => Promise<Buffer | null>

export function gitBlobReader(gitDir: string, maxBytes = 1024 * 1024): BlobReader {
  return async (oid) => {
    if (/^0+$/.test(oid)) return null
    const out = await git(['cat-file', 'blob', oid], { gitDir, maxStdout: maxBytes + 1 })
    if (out.truncated || out.stdout.length > maxBytes)
      throw new Error(`larger than ${maxBytes} bytes`)
    return out.stdout
  }
}
