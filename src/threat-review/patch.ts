// A git patch read into files and their changed lines, with the line numbers GitHub shows (the new
// file's for added lines, the old file's for removed ones). Pure: the patch is text the run already
// holds (diff.patch), never read from the repository again.

export interface PatchLine {
  /** Line number in the new file (added lines) or the old file (removed lines). */
  line: number
  text: string
}

export interface PatchFile {
  /** The path after the change (before it, for a deleted file). */
  path: string
  status: 'added' | 'deleted' | 'modified'
  binary: boolean
  added: PatchLine[]
  removed: PatchLine[]
}

/** Undoes git's C-style quoting of a path (`"a/caf\303\251"`), bytes read as UTF-8. */
export function unquotePath(p: string): string {
  if (!(p.startsWith('"') && p.endsWith('"') && p.length >= 2)) return p
  const body = p.slice(1, -1)
  const bytes: number[] = []
  const SIMPLE: Record<string, number> = { n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11 }
  for (let i = 0; i < body.length; i++) {
    const c = body[i]
    if (c !== '\\' || i + 1 >= body.length) {
      bytes.push(...Buffer.from(c, 'utf8'))
      continue
    }
    const n = body[i + 1]
    if (/[0-7]/.test(n)) {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8) & 0xff)
      i += 3
    } else {
      bytes.push(SIMPLE[n] ?? n.charCodeAt(0))
      i += 1
    }
  }
  return Buffer.from(bytes).toString('utf8')
}

/** The path of a `--- a/x` / `+++ b/x` line, or null for /dev/null. */
function sidePath(rest: string): string | null {
  const p = unquotePath(rest.replace(/\t.*$/, ''))
  if (p === '/dev/null') return null
  return p.replace(/^[ab]\//, '')
}

/** The new path of a `diff --git a/x b/x` header (used when no ---/+++ lines follow). */
function headerPath(line: string): string {
  const rest = line.slice('diff --git '.length)
  const quoted = /"b\/((?:[^"\\]|\\.)*)"$/.exec(rest)
  if (quoted) return unquotePath(`"${quoted[1]}"`)
  const half = rest.lastIndexOf(' b/')
  return half >= 0 ? rest.slice(half + 3) : rest
}

/** Every file section of a git patch, with its added and removed lines. */
export function parsePatch(patch: string): PatchFile[] {
  const files: PatchFile[] = []
  let f: PatchFile | undefined
  let oldLine = 0
  let newLine = 0
  let inHunk = false
  let oldLeft = 0
  let newLeft = 0
  for (const raw of patch.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    if (!inHunk || (oldLeft <= 0 && newLeft <= 0)) {
      inHunk = false
      if (line.startsWith('diff --git ')) {
        f = {
          path: headerPath(line),
          status: 'modified',
          binary: false,
          added: [],
          removed: []
        }
        files.push(f)
        continue
      }
      if (f === undefined) continue
      if (line.startsWith('new file mode')) f.status = 'added'
      else if (line.startsWith('deleted file mode')) f.status = 'deleted'
      else if (line.startsWith('Binary files ') || line === 'GIT binary patch') f.binary = true
      else if (line.startsWith('--- ')) {
        const p = sidePath(line.slice(4))
        if (p === null) f.status = 'added'
        else if (f.status === 'deleted') f.path = p
      } else if (line.startsWith('+++ ')) {
        const p = sidePath(line.slice(4))
        if (p === null) f.status = 'deleted'
        else f.path = p
      } else {
        const h = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line)
        if (h) {
          oldLine = Number(h[1])
          newLine = Number(h[3])
          oldLeft = h[2] === undefined ? 1 : Number(h[2])
          newLeft = h[4] === undefined ? 1 : Number(h[4])
          inHunk = true
        }
      }
      continue
    }
    if (f === undefined) continue
    if (line.startsWith('\\')) continue
    if (line.startsWith('+')) {
      f.added.push({ line: newLine++, text: line.slice(1) })
      newLeft--
    } else if (line.startsWith('-')) {
      f.removed.push({ line: oldLine++, text: line.slice(1) })
      oldLeft--
    } else {
      oldLine++
      newLine++
      oldLeft--
      newLeft--
    }
  }
  return files
}
