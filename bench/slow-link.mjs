// A delaying TCP proxy: a local server behind it behaves like one across a network link with a
// given round-trip time and bandwidth (a hosted runner's link to Docker Hub or npm).
//
//   node bench/slow-link.mjs --rtt-ms 20 --mbit 400 \
//     --forward 0.0.0.0:5001=127.0.0.1:5000 --forward 0.0.0.0:4874=127.0.0.1:4873
//
// Every --forward shares one link: one pacer per direction, so parallel downloads share the
// bandwidth as they would share a runner's network interface. A new connection waits one round
// trip (the TCP handshake) before its first byte is forwarded; after that each chunk leaves when
// the link has serialised it (bytes / bandwidth, behind every earlier chunk in that direction)
// plus half the round trip. A connection that outruns the link is paused (backpressure), so a
// large download is never buffered whole. Standalone: only node: modules.
import * as net from 'node:net'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

/**
 * One direction of a link. `bytesPerMs` is the bandwidth, `oneWayMs` the propagation delay.
 * Pure: `pace(state, now, bytes)` says when a chunk of `bytes` arriving at `now` (ms) reaches
 * the far end, and the link's state afterwards (when it is free to send the next byte).
 *
 * @param {{ freeAt: number }} state
 * @param {number} now
 * @param {number} bytes
 * @param {{ bytesPerMs: number, oneWayMs: number }} link
 * @returns {{ state: { freeAt: number }, at: number }}
 */
export function pace(state, now, bytes, link) {
  if (!(link.bytesPerMs > 0) || !(link.oneWayMs >= 0)) {
    throw new RangeError('a link needs a bandwidth above 0 and a delay of 0 or more')
  }
  const start = Math.max(now, state.freeAt)
  const freeAt = start + bytes / link.bytesPerMs
  return { state: { freeAt }, at: freeAt + link.oneWayMs }
}

/** Megabits per second and a round trip in ms, as the link `pace` takes (per direction). */
export function linkOf(mbit, rttMs) {
  return { bytesPerMs: (mbit * 1e6) / 8 / 1000, oneWayMs: rttMs / 2 }
}

/** Parses `HOST:PORT=HOST:PORT` (listen=target). */
export function parseForward(text) {
  const m = /^(.+):(\d{1,5})=(.+):(\d{1,5})$/.exec(text)
  if (!m) throw new Error(`--forward ${text}: expected LISTEN_HOST:PORT=TARGET_HOST:PORT`)
  return { host: m[1], port: Number(m[2]), targetHost: m[3], targetPort: Number(m[4]) }
}

const HIGH_WATER = 1 << 20

/**
 * A direction of one connection: chunks leave `to` at their paced time, in order. When `from`
 * ends (or closes), `to` is ended once everything queued has left: a server that answers and
 * closes at once still delivers its answer, late, as across a real link.
 */
function pipePaced(from, to, pacer, link) {
  const queue = []
  let queued = 0
  let timer = null
  let ended = false
  const finish = () => {
    if (!to.destroyed && !to.writableEnded) to.end()
  }
  const drain = () => {
    timer = null
    const now = performance.now()
    while (queue.length > 0 && queue[0].at <= now) {
      const { chunk } = queue.shift()
      queued -= chunk.length
      if (!to.destroyed && !to.writableEnded) to.write(chunk)
    }
    if (queued < HIGH_WATER && from.isPaused() && !from.destroyed) from.resume()
    if (queue.length > 0) timer = setTimeout(drain, Math.max(0, queue[0].at - now))
    else if (ended) finish()
  }
  from.on('data', (chunk) => {
    const r = pace(pacer, performance.now(), chunk.length, link)
    pacer.freeAt = r.state.freeAt
    queue.push({ at: r.at, chunk })
    queued += chunk.length
    if (queued >= HIGH_WATER) from.pause()
    if (timer === null) timer = setTimeout(drain, Math.max(0, r.at - performance.now()))
  })
  const onEnd = () => {
    if (ended) return
    ended = true
    if (queue.length === 0 && timer === null) finish()
  }
  from.on('end', onEnd)
  from.on('close', onEnd)
}

/**
 * Starts the link: one listener per forward. Resolves when all listen; `close()` stops them
 * and every open connection.
 *
 * @param {{ forwards: ReturnType<typeof parseForward>[], mbit: number, rttMs: number }} o
 */
export async function startSlowLink(o) {
  const link = linkOf(o.mbit, o.rttMs)
  const up = { freeAt: 0 }
  const down = { freeAt: 0 }
  const sockets = new Set()
  const servers = o.forwards.map((f) =>
    net.createServer({ allowHalfOpen: true }, (client) => {
      client.pause()
      sockets.add(client)
      client.on('close', () => sockets.delete(client))
      client.on('error', () => client.destroy())
      // The handshake's round trip, then the far side.
      setTimeout(() => {
        if (client.destroyed) return
        const server = net.connect({ port: f.targetPort, host: f.targetHost, allowHalfOpen: true })
        sockets.add(server)
        server.on('close', () => sockets.delete(server))
        // A refused or reset far side: the client sees its connection reset.
        server.on('error', () => client.destroy())
        server.on('connect', () => {
          pipePaced(client, server, up, link)
          pipePaced(server, client, down, link)
          client.resume()
        })
      }, o.rttMs)
    })
  )
  await Promise.all(
    servers.map(
      (s, i) =>
        new Promise((resolve, reject) => {
          s.once('error', reject)
          s.listen(o.forwards[i].port, o.forwards[i].host, resolve)
        })
    )
  )
  return {
    close: async () => {
      for (const s of sockets) s.destroy()
      await Promise.all(servers.map((s) => new Promise((r) => s.close(() => r()))))
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      forward: { type: 'string', multiple: true, default: [] },
      mbit: { type: 'string', default: '400' },
      'rtt-ms': { type: 'string', default: '20' }
    }
  })
  const forwards = values.forward.map(parseForward)
  await startSlowLink({ forwards, mbit: Number(values.mbit), rttMs: Number(values['rtt-ms']) })
  process.stdout.write(
    `slow link up: ${values.mbit} Mbit/s, ${values['rtt-ms']} ms round trip, ${forwards.length} forward(s)\n`
  )
  process.on('SIGTERM', () => process.exit(0))
}
