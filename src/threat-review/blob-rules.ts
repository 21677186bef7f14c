// Encoded or packed content: base64 and hex runs, escaped bytes, character codes, split blobs.
import { cut } from './finding.js'
import type { LineRule, ThreatFinding } from './finding.js'
import type { PatchFile, PatchLine } from './patch.js'

export const BLOB_LINE_RULES: LineRule[] = [
  {
    class: 'encoded-blob',
    rule: 'base64-blob',
    severity: 'medium',
    re: /[A-Za-z0-9+/]{120,}={0,2}/,
    // Upper case, lower case and digits: base64, not a long word or a hex run.
    accept: (m) => /[A-Z]/.test(m[0]) && /[a-z]/.test(m[0]) && /\d/.test(m[0]),
    why: 'a long base64 run: content no reviewer can read'
  },
  {
    class: 'encoded-blob',
    rule: 'hex-blob',
    severity: 'medium',
    re: /(?<![0-9a-fA-F])(?:[0-9a-fA-F]{2}){100,}(?![0-9a-fA-F])|(?:0x[0-9a-fA-F]{2}\s*,\s*){32,}/,
    why: 'a long run of hex bytes: content no reviewer can read'
  },
  {
    class: 'encoded-blob',
    rule: 'escape-run',
    severity: 'medium',
    re: /(?:\\x[0-9a-fA-F]{2}){12,}|(?:\\u[0-9a-fA-F]{4}){12,}|(?:\\[0-7]{3}){12,}/,
    why: 'a run of escaped bytes that spells hidden text'
  },
  {
    class: 'encoded-blob',
    rule: 'char-codes',
    severity: 'medium',
    re: /\bString\.fromCharCode\s*\(\s*(\d+\s*,\s*){5,}|(\bchr\s*\(\s*\d+\s*\)\s*\+\s*){4,}|\[\s*(\d{2,3}\s*,\s*){40,}|\[::-1\]|\.split\(\s*(""|'')\s*\)\.reverse\(\)\.join\(|\bstrings\.Reverse\b|\brev\s*<<</,
    why: 'builds text from character codes or reverses it: a way to hide a name'
  }
]

/** A line that is mostly one base64 or hex run of 24 or more characters. */
const BLOB_PIECE = /[A-Za-z0-9+/=]{24,}/

/**
 * An encoded blob cut into short strings on consecutive lines (each under the blob rules' length):
 * four or more such lines in a row, 160 characters or more together.
 */
export function splitBlobs(f: PatchFile, out: ThreatFinding[]): void {
  let run: PatchLine[] = []
  let chars = 0
  const flush = (): void => {
    if (run.length >= 4 && chars >= 160)
      out.push({
        path: f.path,
        line: run[0].line,
        side: 'RIGHT',
        class: 'encoded-blob',
        rule: 'split-blob',
        severity: 'medium',
        why: `${run.length} lines in a row of encoded text (${chars} characters): a blob cut into pieces`,
        match: cut(run[0].text.trim())
      })
    run = []
    chars = 0
  }
  for (const l of f.added) {
    const m = BLOB_PIECE.exec(l.text)
    const piece = m !== null && m[0].length >= 0.6 * l.text.trim().length && /\d/.test(m[0])
    if (!piece || (run.length > 0 && run[run.length - 1].line !== l.line - 1)) flush()
    if (piece) {
      run.push(l)
      chars += m[0].length
    }
  }
  flush()
}
