/**
 * Making untrusted text (agent output, file names, test names) safe to show on GitHub: no
 * control, ANSI/OSC, bidi or zero-width characters, no live @mentions, no raw HTML, no way out of
 * a code span or a <details> block.
 */

// C0/C1 controls except \t and \n, plus DEL.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g
// CSI and OSC escape sequences (the ESC itself is removed by CONTROL afterwards).
const ANSI =
  // eslint-disable-next-line no-control-regex -- matching escape sequences is the point
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u009b[0-?]*[ -/]*[@-~]/g
// Bidi controls, zero-width characters, BOM, and other invisible format characters.
// Also line/paragraph separators, the Arabic letter mark and tag characters.
const INVISIBLE =
  /[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad\u180e\u2028\u2029\u061c\u{e0000}-\u{e007f}]/gu

export function stripControls(text: string): string {
  return text.replace(ANSI, '').replace(CONTROL, '').replace(INVISIBLE, '')
}

/** Escapes text for inline Markdown: HTML, Markdown syntax and mentions are shown, not acted on. */
export function escapeMarkdown(text: string): string {
  return stripControls(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([\\`*_{}[\]()#+!|~])/g, '\\$1')
    .replace(/@/g, '@\u2060')
    .replace(/\n/g, ' ')
}

/** A fenced code block whose fence is longer than any backtick run inside the text. */
export function codeBlock(text: string, lang = ''): string {
  const clean = stripControls(text)
  const longest = Math.max(2, ...(clean.match(/`+/g) ?? []).map((r) => r.length))
  const fence = '`'.repeat(longest + 1)
  return `${fence}${lang}\n${clean.replace(/@/g, '@\u2060')}\n${fence}`
}

/** Cuts text to at most `max` characters, saying so. */
export function cap(text: string, max: number, note: string): string {
  if (text.length <= max) return text
  return text.slice(0, Math.max(0, max - note.length - 1)) + '\n' + note
}
