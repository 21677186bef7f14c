// The one filter for text people read (reviews, summaries, status lines, error messages, logs):
// every character that is invisible, reorders text or acts on a terminal is made visible or
// removed here, and nowhere else. The classes come from Unicode's own properties, so a code point
// Unicode calls default-ignorable, a bidi control, private-use or unassigned is caught without a
// hand list to keep up to date.

/**
 * Hidden characters: controls (not tab and newline), default-ignorable code points (zero-width
 * characters, variation selectors, Hangul fillers, tag characters, the soft hyphen ...), format
 * characters, bidi controls, line and paragraph separators, private-use, surrogate and unassigned
 * code points.
 */
const HIDDEN_CLASS = String.raw`(?![\t\n])[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Bidi_Control}\p{Zl}\p{Zp}\p{Co}\p{Cs}\p{Cn}]`
const HIDDEN = new RegExp(HIDDEN_CLASS, 'gu')

/** Control characters other than tab, newline and carriage return (C0, DEL, C1). */
const CONTROL = /(?![\t\n\r])\p{Cc}/u

/** CSI and OSC escape sequences (what is left of them, the ESC, is hidden anyway). */
const ANSI =
  // eslint-disable-next-line no-control-regex -- matching escape sequences is the point
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u009b[0-?]*[ -/]*[@-~]/g

/** Whether the text holds a control character (tab and line breaks aside). */
export function hasControl(text: string): boolean {
  return CONTROL.test(text)
}

/** Whether the text holds any hidden character (controls, invisible, bidi, unassigned ...). */
export function hasHidden(text: string): boolean {
  return new RegExp(HIDDEN_CLASS, 'u').test(text)
}

function codePoint(c: string): number {
  return c.codePointAt(0) ?? 0
}

/** `⟨U+XXXX⟩`: a visible stand-in for a hidden character. */
function visible(c: string): string {
  return `⟨U+${codePoint(c).toString(16).toUpperCase().padStart(4, '0')}⟩`
}

/**
 * What a reviewer is shown: NFC-normalised, CRLF as LF, every hidden character as `⟨U+XXXX⟩`.
 * With `dropAnsi`, colour sequences are dropped first (inline text; never in code blocks).
 */
export function revealHidden(text: string, options: { dropAnsi?: boolean } = {}): string {
  const t = options.dropAnsi ? text.normalize('NFC').replace(ANSI, '') : text.normalize('NFC')
  return t.replace(/\r\n/g, '\n').replace(HIDDEN, visible)
}

/** Removes ANSI/OSC sequences and every hidden character (one-line status texts, log lines). */
export function stripHidden(text: string): string {
  return text.replace(ANSI, '').replace(HIDDEN, '')
}

/** Hidden characters written as escapes a terminal shows (`\x1b`, `\u202e`); for error messages. */
export function escapeHidden(text: string): string {
  return text.replace(HIDDEN, (c) => {
    const code = codePoint(c)
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : code <= 0xffff
        ? `\\u${code.toString(16).padStart(4, '0')}`
        : `\\u{${code.toString(16)}}`
  })
}
