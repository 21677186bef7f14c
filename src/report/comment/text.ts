// Agent-derived text placed in the comment: cut, then escaped, so it never opens a line or
// breaks the layout.
import { escapeMarkdown } from '../escape.js'

/** Agent-derived strings are cut to this many characters before escaping. */
const MAX_NAME = 200

/** Untrusted text for inline use: cut first (so an escape is never split), then escaped. */
export function t(text: string, max = MAX_NAME): string {
  const chars = [...text]
  return escapeMarkdown(chars.length > max ? chars.slice(0, max).join('') + '…' : text)
}

export function code(text: string, max = MAX_NAME): string {
  // Inline code cannot hold escapes; an escaped plain span in <code> keeps it literal and closed.
  return `<code>${t(text, max)}</code>`
}

export function more(shown: number, total: number, what: string): string {
  return total > shown
    ? `\n\n…and ${total - shown} more ${what} (see report.json in the run artifact)`
    : ''
}

export function bytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(1)} GiB`
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(0)} MiB`
  return `${n} bytes`
}
