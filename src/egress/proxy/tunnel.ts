// CONNECT tunnels: the host is checked, then the TLS ClientHello must name that same host (SNI)
// before one byte goes upstream; encrypted or missing SNI is refused.
import type * as http from 'node:http'
import * as net from 'node:net'
import type { Duplex } from 'node:stream'
import { checkHost, normalizeHost, splitHostPort } from '../host-rules.js'
import { parseClientHello } from '../sni.js'
import { IDLE_MS, resolveUpstream } from './proxy-context.js'
import type { ProxyContext } from './proxy-context.js'

/** How long a tunnel may take to send its ClientHello. */
const HELLO_MS = 10_000

/**
 * HTTP CONNECT to an allowlisted host: the upstream is connected to the address that was checked,
 * and nothing goes to it before the ClientHello names the host that was allowed.
 */
export async function tunnel(
  ctx: ProxyContext,
  req: http.IncomingMessage,
  client: Duplex,
  head: Buffer
): Promise<void> {
  const target = splitHostPort(req.url ?? '')
  if (!target) {
    ctx.connections.deny('connect', 'CONNECT', req.url ?? '', 0, 'bad-request', 'not host:port')
    client.end('HTTP/1.1 400 Bad Request\r\n\r\n')
    return
  }
  const check0 = checkHost(ctx.config.allow, ctx.config.hostMap, target.host, target.port)
  if (!check0.ok) {
    ctx.connections.deny(
      'connect',
      'CONNECT',
      target.host,
      target.port,
      check0.reason,
      check0.detail
    )
    client.end(`HTTP/1.1 403 Forbidden\r\nX-Airlock-Denied: ${check0.reason}\r\n\r\n`)
    return
  }
  const check = check0
  const to = await resolveUpstream(check.host, target.port, check.mapping)
  if ('reason' in to) {
    ctx.connections.deny('connect', 'CONNECT', check.host, target.port, to.reason, to.detail)
    client.end(`HTTP/1.1 403 Forbidden\r\nX-Airlock-Denied: ${to.reason}\r\n\r\n`)
    return
  }
  const o = ctx.connections.track({
    type: 'egress',
    time: new Date().toISOString(),
    kind: 'connect',
    method: 'CONNECT',
    host: check.host,
    port: target.port,
    allowed: true,
    address: to.address,
    bytesUp: 0,
    bytesDown: 0,
    durationMs: 0
  })
  const upstream = net.connect({ host: to.address, port: to.port })
  let connected = false
  upstream.setTimeout(IDLE_MS, () => upstream.destroy())
  client.on('error', () => upstream.destroy())
  upstream.on('error', (error: NodeJS.ErrnoException) => {
    if (!connected) {
      o.event.allowed = false
      o.event.reason = 'connect-failed'
      o.event.detail = error.code ?? error.message
      client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n')
    }
    client.destroy()
  })
  upstream.once('connect', () => {
    connected = true
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
    // Nothing goes upstream before the ClientHello names the host that was allowed.
    let hello = head
    const timer = setTimeout(() => refuse('no ClientHello within 10 s'), HELLO_MS)
    client.once('close', () => clearTimeout(timer))
    const refuse = (detail: string): void => {
      clearTimeout(timer)
      if (client.destroyed) return
      client.off('data', onHello)
      o.event.allowed = false
      o.event.reason = 'sni-mismatch'
      o.event.detail = detail
      client.destroy()
      upstream.destroy()
    }
    const onHello = (c: Buffer): void => {
      hello = Buffer.concat([hello, c])
      inspect()
    }
    const inspect = (): void => {
      const parsed = parseClientHello(hello)
      if (parsed.status === 'need-more') return
      if (parsed.status === 'not-tls') return refuse(`not a TLS ClientHello (${parsed.detail})`)
      const name = parsed.serverName === null ? undefined : normalizeHost(parsed.serverName)
      if (parsed.serverName === null) return refuse('the ClientHello names no server (no SNI)')
      if (parsed.encrypted) return refuse('encrypted ClientHello: the real server name is hidden')
      if (name !== check.host) {
        const shown = parsed.serverName.replace(/[^A-Za-z0-9.-]/g, '?').slice(0, 100)
        return refuse(`SNI ${shown} differs from the CONNECT host ${check.host}`)
      }
      clearTimeout(timer)
      client.off('data', onHello)
      o.event.bytesUp += hello.length
      upstream.write(hello)
      client.on('data', (d: Buffer) => (o.event.bytesUp += d.length))
      upstream.on('data', (d: Buffer) => (o.event.bytesDown += d.length))
      client.pipe(upstream)
      upstream.pipe(client)
    }
    client.on('data', onHello)
    if (hello.length > 0) inspect()
  })
  const done = (): void => {
    upstream.destroy()
    client.destroy()
    ctx.connections.finish(o)
  }
  upstream.on('close', done)
  client.on('close', done)
}
