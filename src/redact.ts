/**
 * Masking the values of secrets the run knows (the values of `env` variables, credentials) in
 * every text the run writes: logs, report.json, tests.json, comment.md, the job summary, and
 * diff.patch. A value is found as itself, base64 (standard and URL-safe, at any alignment),
 * URL-encoded (upper- or lower-case hex), JSON-escaped (as JSON.stringify writes it, with `\/`,
 * and with punctuation as `\uXXXX` in either case: HTML-safe and ASCII-only encoders), hex, and
 * split across lines (the forms: redact-forms.ts; the one-pass matcher: redact-matcher.ts).
 */
import { FormMatcher } from './redact-matcher.js'
import { variants } from './redact-forms.js'

export const MASK = '***'
/** Shorter values are not masked (they would mask ordinary words); documented for users. */
export const MIN_SECRET_LENGTH = 6

export { variants } from './redact-forms.js'

/** Compiled matchers by their values, so a masker made per exchange costs no rebuild. */
const MATCHERS = new Map<string, FormMatcher>()
const MAX_MATCHERS = 16

function matcherFor(values: string[], bytes: boolean): FormMatcher {
  const key = `${bytes ? 'b' : 't'}\0${[...values].sort().join('\0')}`
  let m = MATCHERS.get(key)
  if (m === undefined) {
    const forms = new Set<string>()
    for (const v of values) for (const form of variants(v, bytes)) forms.add(form)
    m = new FormMatcher(forms)
    if (MATCHERS.size >= MAX_MATCHERS) MATCHERS.delete(MATCHERS.keys().next().value as string)
    MATCHERS.set(key, m)
  }
  return m
}

/**
 * Finds and masks secret values in text. `bytes: true` works on byte strings (a Buffer read as
 * latin1), so logs that are not valid UTF-8 pass through unchanged except for the masks.
 */
export class Redactor {
  private matcher: FormMatcher | null = null
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
    if (this.known.size === before && this.matcher !== null) return
    if (this.known.size === 0) return
    this.matcher = matcherFor([...this.known], this.bytes)
    // A form with a line break (\r\n) between each of its characters.
    this.maxMatch = this.matcher.longest * 3
  }

  get empty(): boolean {
    return this.matcher === null
  }

  redact(text: string): string {
    if (this.matcher === null) return text
    return this.maskSpans(text, this.matcher.spans(text))
  }

  /** The text with the given spans (from `matches`, within the text) masked. */
  maskSpans(text: string, spans: { start: number; end: number }[]): string {
    if (spans.length === 0) return text
    let out = ''
    let at = 0
    for (const { start, end } of spans) {
      this.count++
      const lines = text.slice(start, end).split('\n').length - 1
      out += text.slice(at, start) + MASK + '\n'.repeat(lines)
      at = end
    }
    return out + text.slice(at)
  }

  /** Match spans, for the streaming redactor. */
  matches(text: string): { start: number; end: number }[] {
    return this.matcher === null ? [] : this.matcher.spans(text)
  }

  /** Masks every string inside a JSON-like value (keys included). */
  redactValue<T>(value: T): T {
    if (this.matcher === null) return value
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
    const fresh = this.held === ''
    const text = this.held + chunk.toString('latin1')
    let cut = Math.max(0, text.length - this.redactor.maxMatch)
    // A match never spans an empty line: everything up to the last one can go now (a streamed
    // event is released when it is complete, not when the next ones have filled the look-behind).
    const blank = Math.max(text.lastIndexOf('\n\n'), text.lastIndexOf('\n\r\n'))
    if (blank >= 0) cut = Math.max(cut, blank + 1)
    // Never cut inside a match: keep the whole match for the next round.
    const spans = this.redactor.matches(text)
    for (const m of spans) {
      if (m.start < cut && m.end > cut) cut = m.start
    }
    this.held = text.slice(cut)
    const before = spans.filter((m) => m.end <= cut)
    // Nothing held before and nothing to mask: the chunk's own bytes go on, unconverted.
    if (fresh && before.length === 0) return chunk.subarray(0, cut)
    return Buffer.from(this.redactor.maskSpans(text.slice(0, cut), before), 'latin1')
  }

  flush(): Buffer {
    const rest = this.redactor.redact(this.held)
    this.held = ''
    return Buffer.from(rest, 'latin1')
  }
}
