/**
 * Masking on the egress proxy's hot path: one credential-route answer (a 32 KB server-sent-event
 * stream of a model's reply, in 4 KB chunks) through the proxy's reflection filter, with the
 * longest and the most punctuated credential values the docs allow (two of 1,024 characters),
 * against the same answer with no credential to mask. The two sides alternate (A B, B A, ...);
 * medians of ROUNDS rounds of EXCHANGES each. Prints a table; asserts nothing.
 */
import { Readable } from 'node:stream'
import type * as http from 'node:http'
import { filterResponse } from '../src/egress/reflection.js'

const ROUNDS = Number(process.env.AIRLOCK_BENCH_MASK_ROUNDS ?? '9')
const EXCHANGES = 100

const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('')
/** The longest value the docs allow, and the most punctuated one (one line of printable ASCII). */
const LONG = 'sk-ant-' + 'Ab9_'.repeat(254) + 'Zz9'
const PUNCTUATED = (printable.replace(/[A-Za-z0-9 ]/g, '') + 'x').repeat(40).slice(0, 1024)

function answer(): Buffer[] {
  const events: string[] = []
  for (let i = 0; events.join('').length < 32 * 1024; i++) {
    const delta = JSON.stringify({ type: 'text_delta', text: `token ${i} of the reply; ` })
    events.push(`event: content_block_delta\ndata: {"index":0,"delta":${delta}}\n\n`)
  }
  const all = Buffer.from(events.join(''))
  const chunks: Buffer[] = []
  for (let at = 0; at < all.length; at += 4096) chunks.push(all.subarray(at, at + 4096))
  return chunks
}

async function exchange(chunks: Buffer[], secrets: string[]): Promise<void> {
  const upstream = Readable.from(chunks) as unknown as http.IncomingMessage
  const filtered = filterResponse(upstream, { 'content-type': 'text/event-stream' }, secrets)
  if ('error' in filtered) throw new Error(filtered.error)
  for await (const chunk of filtered.body) void chunk
}

async function timed(chunks: Buffer[], secrets: string[]): Promise<number> {
  const start = process.hrtime.bigint()
  for (let i = 0; i < EXCHANGES; i++) await exchange(chunks, secrets)
  return Number(process.hrtime.bigint() - start) / 1e6 / EXCHANGES
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

const chunks = answer()
const none: number[] = []
const masked: number[] = []
await timed(chunks, [LONG, PUNCTUATED]) // the first exchange compiles the matcher once per run
for (let r = 0; r < ROUNDS; r++) {
  if (r % 2 === 0) {
    none.push(await timed(chunks, []))
    masked.push(await timed(chunks, [LONG, PUNCTUATED]))
  } else {
    masked.push(await timed(chunks, [LONG, PUNCTUATED]))
    none.push(await timed(chunks, []))
  }
}
const a = median(none)
const b = median(masked)
process.stdout.write(
  [
    '',
    `Masking on the proxy's hot path (one 32 KB streamed answer, medians of ${ROUNDS} rounds of ${EXCHANGES})`,
    '',
    '| credential values masked | ms per exchange | ratio | target |',
    '|---|--:|--:|--:|',
    `| none | ${a.toFixed(2)} | 1.00× | |`,
    `| two of 1,024 characters (the longest, the most punctuated) | ${b.toFixed(2)} | ${(b / a).toFixed(2)}× | ≤ 1.2× |`,
    ''
  ].join('\n')
)
