// No reflection: what an upstream of a credential route answers is searched for the secret the
// proxy injected (as itself, base64, URL-encoded, JSON-escaped, hex, split across lines) before
// any byte reaches the agent. Compressed bodies are decoded first (the agent gets them decoded);
// an encoding the proxy cannot read is refused rather than passed through unread.
import type * as http from 'node:http'
import { PassThrough, Transform, pipeline, type Readable } from 'node:stream'
import * as zlib from 'node:zlib'
import { Redactor, StreamRedactor } from '../redact.js'

export type FilteredResponse =
  | {
      headers: Record<string, string | string[]>
      body: Readable
      /** Masked occurrences so far (headers and body). */
      reflected: () => number
    }
  | { error: string }

/** Headers that describe the body as the upstream sent it; wrong once it is decoded or masked. */
const BODY_HEADERS = ['content-length', 'content-md5', 'digest', 'content-digest', 'repr-digest']

function decoder(encoding: string): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined {
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip()
    case 'deflate':
      return zlib.createInflate()
    case 'br':
      return zlib.createBrotliDecompress()
    default:
      return undefined
  }
}

export function filterResponse(
  upstream: http.IncomingMessage,
  headers: Record<string, string | string[]>,
  secrets: string[]
): FilteredResponse {
  const text = new Redactor(secrets)
  const out: Record<string, string | string[]> = {}
  for (const [k, v] of Object.entries(headers)) {
    const key = k.toLowerCase()
    if (BODY_HEADERS.includes(key)) continue
    out[text.redact(key)] = Array.isArray(v) ? v.map((x) => text.redact(x)) : text.redact(v)
  }
  const encodings = String(out['content-encoding'] ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== '' && e !== 'identity')
  const decoders: Transform[] = []
  // Applied in the order listed: decoded in reverse.
  for (const e of encodings.reverse()) {
    const d = decoder(e)
    if (!d)
      return { error: `content-encoding ${e.replace(/[^a-z0-9-]/g, '?')} cannot be inspected` }
    decoders.push(d)
  }
  delete out['content-encoding']
  const body = new StreamRedactor(secrets)
  const mask = new Transform({
    transform(chunk: Buffer, _enc, done) {
      done(null, body.push(chunk))
    },
    flush(done) {
      done(null, body.flush())
    }
  })
  const result = new PassThrough()
  pipeline([upstream, ...decoders, mask, result], (error) => {
    if (error) result.destroy(error)
  })
  return { headers: out, body: result, reflected: () => text.count + body.count }
}
