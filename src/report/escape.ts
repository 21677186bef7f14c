/**
 * Making untrusted text (agent output, file names, test names) safe to show on GitHub: no live
 * @mentions, issue references or links, no raw HTML, no way out of a code span, a fence or a
 * <details> block. Invisible and control characters are not silently dropped from what a
 * reviewer reads: they are shown as `⟨U+XXXX⟩` by the one filter of src/text-filter.ts, so
 * nothing can be hidden in plain sight.
 */

import { revealHidden } from '../text-filter.js'

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
 * The product's own sentence (a refusal's or a pending approval's reason) for a reply: its code
 * spans, which carry commands to copy such as `/airlock approve 1a2b3c4d5e6f protected`, are kept
 * as code (inside a code span GitHub renders no mention, link or HTML); everything else is escaped
 * as any text is, so a login or a value quoted in the reason cannot format or ping.
 */
export function escapeProductText(text: string): string {
  return text
    .split(/(`[^`\n]{1,200}`)/)
    .map((part, i) => (i % 2 === 1 ? codeSpan(part.slice(1, -1)) : escapeMarkdown(part)))
    .join('')
}

/** A one-line code span: no line breaks, hidden or control characters (shown as escapes). */
function codeSpan(text: string): string {
  return `\`${revealHidden(text, { dropAnsi: true }).replace(/[`\r\n]/g, ' ')}\``
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
