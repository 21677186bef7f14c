// Git's NUL-separated listings (`ls-tree -z`, `diff-tree -z`, `diff-index -z`) read one way:
// names stay raw bytes (no quoting, no encoding assumed), records are split on NUL only.

/** The fields of a `-z` listing: split on NUL, a trailing NUL ends the last field. */
export function splitNul(out: Buffer): Buffer[] {
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
  return fields
}

/** One record of `git ls-tree -z`: `<mode> SP <type> SP <oid> TAB <path>`. */
export interface TreeListingEntry {
  mode: string
  type: string
  oid: string
  /** The path as git stored it, raw bytes. */
  path: Buffer
}

/** Parses `git ls-tree -z` output (with or without `-r` / `-t`). */
export function parseTreeListing(out: Buffer): TreeListingEntry[] {
  return splitNul(out).map((rec) => {
    const tab = rec.indexOf(9)
    const [mode, type, oid] = rec.subarray(0, tab).toString('latin1').split(' ')
    return { mode, type, oid, path: Buffer.from(rec.subarray(tab + 1)) }
  })
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
