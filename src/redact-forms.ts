/**
 * The forms of one secret value that the redactor searches for: itself, base64 (standard and
 * URL-safe, at any alignment), URL-encoded (upper- or lower-case hex), JSON-escaped (as
 * JSON.stringify writes it, with `\/`, and with punctuation as `\uXXXX` in either case), and hex.
 */

/** Base64 fragments shorter than this are not matched (too many false positives). */
const MIN_FRAGMENT = 8

/** The base64 characters fully determined by `secret` when it starts at byte offset k (mod 3). */
function base64Fragments(secret: Buffer): string[] {
  const out: string[] = []
  for (let k = 0; k < 3; k++) {
    const encoded = Buffer.concat([Buffer.alloc(k), secret]).toString('base64')
    const start = Math.ceil((8 * k) / 6)
    const end = Math.floor((8 * (k + secret.length)) / 6)
    const fragment = encoded.slice(start, end)
    if (fragment.length >= MIN_FRAGMENT) {
      out.push(fragment)
      const urlSafe = fragment.replace(/\+/g, '-').replace(/\//g, '_')
      if (urlSafe !== fragment) out.push(urlSafe)
    }
  }
  return out
}

/** Characters the HTML-safe JSON encoders escape as `\uXXXX` (.NET's default, Go's `<>&`). */
const HTML_SENSITIVE = /^[<>&'"`+]$/

/**
 * `value` as a JSON string's content, with the characters `escaped` accepts written as `\uXXXX`
 * (each UTF-16 unit; hex digits upper- or lower-case) and, with `slash`, `/` as `\/`.
 */
function jsonEscaped(
  value: string,
  escaped: (c: string) => boolean,
  upper: boolean,
  slash: boolean
): string {
  let out = ''
  for (const c of value) {
    if (escaped(c)) {
      for (let k = 0; k < c.length; k++) {
        const hex = c.charCodeAt(k).toString(16).padStart(4, '0')
        out += `\\u${upper ? hex.toUpperCase() : hex}`
      }
    } else out += slash && c === '/' ? '\\/' : JSON.stringify(c).slice(1, -1)
  }
  return out
}

/** The JSON string forms other encoders write: `\/` (PHP, some Java), `\uXXXX` for punctuation. */
function jsonForms(value: string): string[] {
  const none = (): boolean => false
  const html = (c: string): boolean => HTML_SENSITIVE.test(c)
  // ASCII-only encoders: everything but letters and digits.
  const strict = (c: string): boolean => !/^[A-Za-z0-9]$/.test(c)
  return [
    jsonEscaped(value, none, true, true),
    ...[true, false].flatMap((upper) => [
      jsonEscaped(value, html, upper, false),
      jsonEscaped(value, html, upper, true),
      jsonEscaped(value, strict, upper, false)
    ])
  ]
}

/** Percent-encoding with lower-case hex digits (RFC 3986 allows either case). */
const lowerPercent = (text: string): string => text.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())

/** Every form of one value that is searched for, as text (or as bytes read as latin1). */
export function variants(value: string, bytes: boolean): string[] {
  const raw = Buffer.from(value, 'utf8')
  const forms = new Set<string>([
    value,
    encodeURIComponent(value),
    encodeURIComponent(value).replace(/%20/g, '+'),
    encodeURI(value),
    lowerPercent(encodeURIComponent(value)),
    lowerPercent(encodeURIComponent(value).replace(/%20/g, '+')),
    lowerPercent(encodeURI(value)),
    JSON.stringify(value).slice(1, -1),
    ...jsonForms(value),
    raw.toString('hex'),
    raw.toString('hex').toUpperCase(),
    ...base64Fragments(raw)
  ])
  return [...forms].map((f) => (bytes ? Buffer.from(f, 'utf8').toString('latin1') : f))
}
