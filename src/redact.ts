/**
 * Masking the values of secrets the run knows (the values of `env` variables, credentials) in
 * every text the run writes: logs, report.json, tests.json, comment.md, the job summary, and
 * diff.patch. A value is found as itself, base64 (standard and URL-safe, at any alignment),
 * URL-encoded (upper- or lower-case hex), JSON-escaped (as JSON.stringify writes it, with `\/`,
 * and with punctuation as `\uXXXX` in either case: HTML-safe and ASCII-only encoders), hex, and
 * split across lines.
 */

export const MASK = '***'
/** Shorter values are not masked (they would mask ordinary words); documented for users. */
export const MIN_SECRET_LENGTH = 6
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

/**
 * All forms of all values, found in one pass over the text (Aho-Corasick), linear in the text
 * whatever the number and length of the values. One line break (`\n` or `\r\n`) may sit between
 * any two characters of a form; a blank line never does. At each start the longest form wins;
 * matches do not overlap (leftmost first).
 */
/** Nodes this deep or shallower get a dense table of their ASCII transitions. */
const DENSE_DEPTH = 3

class FormMatcher {
  /** Transitions of every node but the root, keyed node * 0x10000 + character code. */
  private readonly edges = new Map<number, number>()
  /** The root's transitions by character code (0: none). */
  private readonly root = new Int32Array(0x10000)
  private readonly fail: number[] = [0]
  /** The longest form ending at this node (its own, or one of its suffixes'); 0: none. */
  private readonly out: number[] = [0]
  /**
   * For the shallow nodes, where text that is no secret spends its time: the next node on each
   * ASCII character with the failure links already followed (one array read instead of a walk).
   */
  private dense = new Int32Array(0)
  /** Where a node's row starts in `dense` (-1: a deeper node, no row). */
  private readonly row: number[] = [-1]
  readonly longest: number
  /** Positions of the characters taken into the current match (reused by every scan). */
  private readonly ring: Int32Array

  constructor(forms: Iterable<string>) {
    let longest = 0
    const children: number[][] = [[]]
    const codes: number[] = [0]
    for (const form of forms) {
      let node = 0
      for (let k = 0; k < form.length; k++) {
        const c = form.charCodeAt(k)
        let to = this.step(node, c)
        if (to === 0) {
          to = this.fail.length
          this.fail.push(0)
          this.out.push(0)
          this.row.push(-1)
          children.push([])
          codes.push(c)
          children[node].push(to)
          if (node === 0) this.root[c] = to
          else this.edges.set(node * 0x10000 + c, to)
        }
        node = to
      }
      this.out[node] = form.length
      longest = Math.max(longest, form.length)
    }
    this.longest = longest
    this.ring = new Int32Array(Math.max(1, longest))
    // Failure links breadth-first; a node's output is its own form or its longest suffix's.
    const queue: number[] = [...children[0]]
    const depth = new Map<number, number>(queue.map((n) => [n, 1]))
    const rows: Int32Array[] = []
    for (let q = 0; q < queue.length; q++) {
      const node = queue[q]
      if (this.out[node] === 0) this.out[node] = this.out[this.fail[node]]
      const d = depth.get(node) ?? 0
      if (d <= DENSE_DEPTH) {
        const table = new Int32Array(128)
        const f = this.fail[node]
        for (let c = 0; c < 128; c++) {
          const to = this.step(node, c)
          table[c] = to !== 0 ? to : f === 0 ? this.root[c] : rows[this.row[f] / 128][c]
        }
        this.row[node] = rows.length * 128
        rows.push(table)
      }
      for (const child of children[node]) depth.set(child, d + 1)
      for (const child of children[node]) {
        const c = codes[child]
        let f = this.fail[node]
        while (f !== 0 && this.step(f, c) === 0) f = this.fail[f]
        const to = this.step(f, c)
        this.fail[child] = to !== child ? to : 0
        queue.push(child)
      }
    }
    this.dense = new Int32Array(rows.length * 128)
    rows.forEach((r, i) => this.dense.set(r, i * 128))
  }

  /** The node after `node` on character `c` (0: no transition). */
  private step(node: number, c: number): number {
    return node === 0 ? this.root[c] : (this.edges.get(node * 0x10000 + c) ?? 0)
  }

  /** Spans of the text that are a form (with its line breaks), leftmost-longest, disjoint. */
  spans(text: string): { start: number; end: number }[] {
    if (this.longest === 0) return []
    const ring = this.ring
    let taken = 0
    let state = 0
    // 0: after a character; 1: after a \r; 2: after the one line break allowed.
    let gap = 0
    const found: { start: number; end: number }[] = []
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (state === 0) {
        state = this.root[c]
        if (state === 0) continue
        gap = 0
      } else if (c < 128 && c !== 10 && c !== 13 && this.row[state] >= 0) {
        state = this.dense[this.row[state] + c]
        gap = 0
        if (state === 0) continue
      } else {
        let to = this.step(state, c)
        if (to === 0) {
          if (c === 13 && gap === 0) {
            gap = 1
            continue
          }
          if (c === 10 && gap < 2) {
            gap = 2
            continue
          }
          while (state !== 0 && to === 0) {
            state = this.fail[state]
            to = this.step(state, c)
          }
        }
        gap = 0
        state = to
        if (state === 0) continue
      }
      ring[taken % this.longest] = i
      taken++
      const length = this.out[state]
      if (length > 0) found.push({ start: ring[(taken - length) % this.longest], end: i + 1 })
    }
    // Leftmost first, the longest at a start; then no overlap.
    found.sort((a, b) => a.start - b.start || b.end - a.end)
    const spans: { start: number; end: number }[] = []
    let reached = 0
    for (const f of found) {
      if (f.start < reached) continue
      spans.push(f)
      reached = f.end
    }
    return spans
  }
}

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
