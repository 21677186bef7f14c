/**
 * Masking the values of secrets the run knows (the values of `env` variables, credentials) in
 * every text the run writes: logs, report.json, tests.json, comment.md, the job summary, and
 * diff.patch. A value is found as itself, base64 (standard and URL-safe, at any alignment),
 * URL-encoded, JSON-escaped, hex, and split across lines.
 */

export const MASK = '***'
/** Shorter values are not masked (they would mask ordinary words); documented for users. */
export const MIN_SECRET_LENGTH = 6
/** Base64 fragments shorter than this are not matched (too many false positives). */
const MIN_FRAGMENT = 8

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

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

/** Every form of one value that is searched for, as text (or as bytes read as latin1). */
export function variants(value: string, bytes: boolean): string[] {
  const raw = Buffer.from(value, 'utf8')
  const forms = new Set<string>([
    value,
    encodeURIComponent(value),
    encodeURIComponent(value).replace(/%20/g, '+'),
    encodeURI(value),
    JSON.stringify(value).slice(1, -1),
    raw.toString('hex'),
    raw.toString('hex').toUpperCase(),
    ...base64Fragments(raw)
  ])
  return [...forms].map((f) => (bytes ? Buffer.from(f, 'utf8').toString('latin1') : f))
}

/**
 * Finds and masks secret values in text. `bytes: true` works on byte strings (a Buffer read as
 * latin1), so logs that are not valid UTF-8 pass through unchanged except for the masks.
 */
export class Redactor {
  private pattern: RegExp | null = null
  private readonly known = new Set<string>()
  /** The longest text one match can span (for the streaming redactor's look-behind). */
  maxMatch = 0
  /** How many matches `redact` has masked so far. */
  count = 0

  constructor(
    secrets: Iterable<string>,
    private readonly bytes = false
  ) {
    this.add(secrets)
  }

  /** The values masked (each in every form). */
  get values(): string[] {
    return [...this.known]
  }

  /**
   * Adds values found during the run (a token shape the scanner found): from then on they are
   * masked like the values known at the start.
   */
  add(secrets: Iterable<string>): void {
    const before = this.known.size
    for (const s of secrets) if (s.length >= MIN_SECRET_LENGTH) this.known.add(s)
    if (this.known.size === before && this.pattern !== null) return
    const alternatives: string[] = []
    let maxMatch = 0
    for (const v of this.known) {
      for (const form of variants(v, this.bytes)) {
        // Split across lines: a line break (with an optional \r and a log prefix-free join) may
        // sit between any two characters.
        alternatives.push([...form].map(escapeRegExp).join('(?:\\r?\\n)?'))
        maxMatch = Math.max(maxMatch, form.length * 3)
      }
    }
    // Longest alternatives first, so a longer form wins over a prefix of it.
    alternatives.sort((a, b) => b.length - a.length)
    this.pattern = alternatives.length > 0 ? new RegExp(alternatives.join('|'), 'g') : null
    this.maxMatch = maxMatch
  }

  get empty(): boolean {
    return this.pattern === null
  }

  redact(text: string): string {
    if (this.pattern === null) return text
    return text.replace(this.pattern, (m) => {
      this.count++
      return MASK + '\n'.repeat(m.split('\n').length - 1)
    })
  }

  /** Match spans, for the streaming redactor. */
  matches(text: string): { start: number; end: number }[] {
    if (this.pattern === null) return []
    const out: { start: number; end: number }[] = []
    for (const m of text.matchAll(this.pattern))
      out.push({ start: m.index, end: m.index + m[0].length })
    return out
  }

  /** Masks every string inside a JSON-like value (keys included). */
  redactValue<T>(value: T): T {
    if (this.pattern === null) return value
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return this.redact(v)
      if (Array.isArray(v)) return v.map(walk)
      if (typeof v === 'object' && v !== null) {
        const out: Record<string, unknown> = {}
        for (const [k, x] of Object.entries(v)) out[this.redact(k)] = walk(x)
        return out
      }
      return v
    }
    return walk(value) as T
  }
}

/**
 * Masks secrets in a byte stream that arrives in chunks: a value cut by a chunk boundary is still
 * found, because the tail that could be the start of a match is held back until the next chunk
 * (or `flush`).
 */
export class StreamRedactor {
  private held = ''
  private readonly redactor: Redactor

  constructor(secrets: Iterable<string>) {
    this.redactor = new Redactor(secrets, true)
  }

  /** How many values were masked so far. */
  get count(): number {
    return this.redactor.count
  }

  push(chunk: Buffer): Buffer {
    if (this.redactor.empty) return chunk
    const text = this.held + chunk.toString('latin1')
    let cut = Math.max(0, text.length - this.redactor.maxMatch)
    // A match never spans an empty line: everything up to the last one can go now (a streamed
    // event is released when it is complete, not when the next ones have filled the look-behind).
    const blank = Math.max(text.lastIndexOf('\n\n'), text.lastIndexOf('\n\r\n'))
    if (blank >= 0) cut = Math.max(cut, blank + 1)
    // Never cut inside a match: keep the whole match for the next round.
    for (const m of this.redactor.matches(text)) {
      if (m.start < cut && m.end > cut) cut = m.start
    }
    this.held = text.slice(cut)
    return Buffer.from(this.redactor.redact(text.slice(0, cut)), 'latin1')
  }

  flush(): Buffer {
    const rest = this.redactor.redact(this.held)
    this.held = ''
    return Buffer.from(rest, 'latin1')
  }
}
