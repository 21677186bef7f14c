// Lines as the rules read them: comments, and string splits joined.

/** Characters of one line the rules read (a longer line is also a finding of its own). */
export const MAX_LINE = 64 * 1024

/** A line that is only a comment (the rules on endpoints skip it: a link in a comment runs nothing). */
export function isComment(text: string): boolean {
  return /^\s*(\/\/(?!go:)|#(?!!)|\*|\/\*|<!--|--\s|;|REM\s)/.test(text)
}

/**
 * The line with string splits joined and escapes decoded, the way an attacker splits a name to
 * hide it: `"ht" + "tps"`, `'ev' 'al'` (Python), `"cu""rl"` (shell), `["e","v","a","l"].join("")`,
 * `\x65\x76\x61\x6c`.
 */
export function joined(text: string): string {
  if (!/["'`\\]/.test(text)) return text
  let t = text
    .replace(/(["'`])\s*\+\s*(["'`])/g, '')
    .replace(/(["'])\s*\.\s*(["'])/g, '') // PHP / Perl concatenation
    .replace(/(["'])[ \t]+(["'])/g, '')
    .replace(/(["'])\1(?=\w)/g, '')
  if (/\.join\(|\bjoin\(|strings\.Join/.test(t)) t = t.replace(/(["'])\s*,\s*(["'])/g, '')
  t = t
    .replace(/\\x([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\\u\{?([0-9a-fA-F]{4})\}?/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
  return t
}
