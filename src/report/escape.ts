/**
 * Making untrusted text (agent output, file names, test names) safe to show on GitHub: no live
 * @mentions, issue references or links, no raw HTML, no way out of a code span, a fence or a
 * <details> block. Invisible and control characters are not silently dropped from what a
 * reviewer reads: they are shown as `⟨U+XXXX⟩`, so nothing can be hidden in plain sight. Text is
 * NFC-normalised first, so what is shown is the canonical form of what was written.
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
// Everything that is shown escaped instead: controls (not \t, \n) and the invisible characters.
const HIDDEN =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad\u180e\u2028\u2029\u061c\u{e0000}-\u{e007f}]/gu

/** Removes controls, ANSI/OSC sequences and invisible characters (one-line status texts, logs). */
export function stripControls(text: string): string {
  return text.replace(ANSI, '').replace(CONTROL, '').replace(INVISIBLE, '')
}

/** A visible stand-in for a character that would otherwise be invisible or act on the terminal. */
function visible(c: string): string {
  return `⟨U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}⟩`
}

/**
 * NFC-normalises and makes hidden characters visible: what a reviewer is shown. ANSI colour
 * sequences are dropped from inline text (they carry no content), never from code blocks.
 */
export function revealHidden(text: string, options: { dropAnsi?: boolean } = {}): string {
  const t = options.dropAnsi ? text.normalize('NFC').replace(ANSI, '') : text.normalize('NFC')
  return t.replace(/\r\n/g, '\n').replace(HIDDEN, visible)
}

/**
 * Escapes text for inline Markdown: HTML, Markdown syntax, mentions, issue references and links
 * are shown, not acted on. A word joiner (U+2060) after `@` and `#`, inside `://` and after
 * `www` keeps GitHub from turning them into mentions, references or links; the text reads the same.
 */
export function escapeMarkdown(text: string): string {
  return revealHidden(text, { dropAnsi: true })
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([\\`*_{}[\]()#+!|~])/g, '\\$1')
    .replace(/@/g, '@\u2060')
    .replace(/#/g, '#\u2060')
    .replace(/:\/\//g, ':\u2060//')
    .replace(/\b(www)\./gi, '$1\u2060.')
    .replace(/\n/g, ' ')
}

/**
 * A fenced code block whose fence is longer than any backtick run inside the text. Inside a fence
 * GitHub renders nothing (no mention, reference, link or HTML), so the text is left as written —
 * NFC-normalised, hidden characters shown as `⟨U+XXXX⟩` — and copies back out unchanged.
 */
export function codeBlock(text: string, lang = ''): string {
  const clean = revealHidden(text)
  const longest = Math.max(2, ...(clean.match(/`+/g) ?? []).map((r) => r.length))
  const fence = '`'.repeat(longest + 1)
  return `${fence}${lang.replace(/[^A-Za-z0-9_-]/g, '')}\n${clean}\n${fence}`
}

/** Cuts text to at most `max` characters, saying so. */
export function cap(text: string, max: number, note: string): string {
  if (text.length <= max) return text
  return text.slice(0, Math.max(0, max - note.length - 1)) + '\n' + note
}
