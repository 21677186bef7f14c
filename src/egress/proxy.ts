// The egress proxy: runs inside its own hardened container (bundled as dist/proxy.js), the only
// thing the agent's network reaches. HTTP CONNECT and plain HTTP to allowlisted names only; the
// proxy resolves names itself and connects to the address it checked. Credential routes
// (`/NAME/...`) are forwarded over TLS with the real secret added, and recorded.
import { createHash } from 'node:crypto'
import * as dns from 'node:dns'
import * as http from 'node:http'
import * as https from 'node:https'
import * as net from 'node:net'
import * as tls from 'node:tls'
import type { Duplex } from 'node:stream'
import {
  checkHost,
  isNonPublicAddress,
  normalizeHost,
  splitHostPort,
  type CredentialRoute,
  type DenyReason,
  type HostMapping,
  type HostRule
} from './policy.js'

export interface ProxyConfig {
  /** The address on the agent's internal network only: never all interfaces. */
  listen: { host: string; port: number }
  allow: HostRule[]
  hostMap: HostMapping[]
  credentials: (CredentialRoute & { secret: string })[]
  /** Extra CA certificates (PEM) trusted for credential upstreams, besides the system's. */
  extraCa?: string
  /** The proxy's own names inside the sandbox (requests to them are credential routes). */
  selfNames: string[]
  /** Bytes of each request/response body kept in the transcript. */
  maxRecordBytes: number
}

export interface EgressEvent {
  type: 'egress'
  time: string
  kind: 'connect' | 'http' | 'credential'
  method: string
  host: string
  port: number
  allowed: boolean
  reason?: DenyReason
  detail?: string
  /** The address the proxy connected to (after the checks). */
  address?: string
  status?: number
  route?: string
  bytesUp: number
  bytesDown: number
  durationMs: number
}

export interface RecordedBody {
  bytes: number
  sha256: string
  truncated: boolean
  text: string
}

export interface TranscriptRecord {
  type: 'transcript'
  time: string
  route: string
  method: string
  path: string
  status: number
  durationMs: number
  request: { headers: Record<string, string>; body: RecordedBody }
  response: { headers: Record<string, string>; body: RecordedBody }
}

export type ProxyEvent = EgressEvent | TranscriptRecord

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host'
])
/** Headers that carry credentials: dropped from what the agent sends, redacted in the transcript. */
export const SECRET_HEADERS = new Set([
  'authorization',
  'x-api-key',
  'x-goog-api-key',
  'api-key',
  'cookie',
  'set-cookie',
  'proxy-authorization'
])
const IDLE_MS = 10 * 60_000

export function redactHeaders(
  headers: http.IncomingHttpHeaders | http.OutgoingHttpHeaders,
  extra: string[] = []
): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue
    const key = k.toLowerCase()
    out[key] =
      SECRET_HEADERS.has(key) || extra.includes(key)
        ? '[REDACTED]'
        : Array.isArray(v)
          ? v.join(', ')
          : String(v)
  }
  return out
}

class Recorder {
  private readonly chunks: Buffer[] = []
  private kept = 0
  private readonly hash = createHash('sha256')
  bytes = 0
  constructor(private readonly cap: number) {}
  push(chunk: Buffer): void {
    this.bytes += chunk.length
    this.hash.update(chunk)
    if (this.kept < this.cap) {
      const part = chunk.subarray(0, this.cap - this.kept)
      this.chunks.push(part)
      this.kept += part.length
    }
  }
  body(redact: (s: string) => string): RecordedBody {
    return {
      bytes: this.bytes,
      sha256: this.hash.digest('hex'),
      truncated: this.kept < this.bytes,
      text: redact(Buffer.concat(this.chunks).toString('utf8'))
    }
  }
}

export class EgressProxy {
  private readonly server: http.Server
  private readonly open = new Set<{ event: EgressEvent; started: number }>()
  /** Upstream connections are kept alive and reused (TLS handshakes and CA parsing are costly). */
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64 })
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64 })
  private readonly secureContext: tls.SecureContext | undefined
  private readonly secrets: string[]

  constructor(
    private readonly config: ProxyConfig,
    private readonly emit: (event: ProxyEvent) => void
  ) {
    this.secureContext = config.extraCa
      ? tls.createSecureContext({ ca: [...tls.rootCertificates, config.extraCa] })
      : undefined
    this.secrets = config.credentials.map((c) => c.secret).filter((s) => s.length > 0)
    this.server = http.createServer({ requestTimeout: 0 }, (req, res) => {
      this.onRequest(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(502)
        res.end()
      })
    })
    this.server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      this.onConnect(req, socket, head).catch(() => socket.destroy())
    })
    // The agent alone uses the proxy: bound what it can hold open at once.
    this.server.maxConnections = 512
    this.server.on('clientError', (_err, socket) => {
      socket.destroy()
    })
  }

  listen(): Promise<net.AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(this.config.listen.port, this.config.listen.host, () => {
        resolve(this.server.address() as net.AddressInfo)
      })
    })
  }

  /** Stops accepting, reports the connections still open with their bytes so far. */
  async close(): Promise<void> {
    for (const o of this.open) this.finish(o)
    this.open.clear()
    this.server.closeAllConnections?.()
    this.httpAgent.destroy()
    this.httpsAgent.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private redact(text: string): string {
    let out = text
    for (const s of this.secrets) out = out.split(s).join('[REDACTED]')
    return out
  }

  private track(event: EgressEvent): { event: EgressEvent; started: number } {
    const o = { event, started: Date.now() }
    this.open.add(o)
    return o
  }

  private finish(o: { event: EgressEvent; started: number }): void {
    if (!this.open.delete(o)) return
    o.event.durationMs = Date.now() - o.started
    this.emit(o.event)
  }

  private deny(
    kind: EgressEvent['kind'],
    method: string,
    host: string,
    port: number,
    reason: DenyReason,
    detail: string
  ): void {
    this.emit({
      type: 'egress',
      time: new Date().toISOString(),
      kind,
      method,
      host: this.redact(host).slice(0, 300),
      port,
      allowed: false,
      reason,
      detail,
      bytesUp: 0,
      bytesDown: 0,
      durationMs: 0
    })
  }

  /** The address to connect to: the host-map entry, or a public address from DNS. */
  private async resolve(
    host: string,
    port: number,
    mapping: HostMapping | undefined
  ): Promise<
    { address: string; port: number } | { reason: DenyReason; detail: string; address?: string }
  > {
    if (mapping) return { address: mapping.address, port: mapping.port ?? port }
    let addresses: dns.LookupAddress[]
    try {
      addresses = await dns.promises.lookup(host, { all: true, verbatim: true })
    } catch (error) {
      return { reason: 'dns-failed', detail: (error as NodeJS.ErrnoException).code ?? 'lookup' }
    }
    if (addresses.length === 0) return { reason: 'dns-failed', detail: 'no address' }
    const bad = addresses.find((a) => isNonPublicAddress(a.address))
    if (bad) {
      return {
        reason: 'private-address',
        detail: `${host} resolves to ${bad.address}, a non-public address (configure host-map to allow it)`,
        address: bad.address
      }
    }
    return { address: addresses[0].address, port }
  }

  private async onConnect(req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const target = splitHostPort(req.url ?? '')
    if (!target) {
      this.deny('connect', 'CONNECT', req.url ?? '', 0, 'bad-request', 'not host:port')
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n')
      return
    }
    const check = checkHost(this.config.allow, this.config.hostMap, target.host, target.port)
    if (!check.ok) {
      this.deny('connect', 'CONNECT', target.host, target.port, check.reason, check.detail)
      client.end(`HTTP/1.1 403 Forbidden\r\nX-Airlock-Denied: ${check.reason}\r\n\r\n`)
      return
    }
    const to = await this.resolve(check.host, target.port, check.mapping)
    if ('reason' in to) {
      this.deny('connect', 'CONNECT', check.host, target.port, to.reason, to.detail)
      client.end(`HTTP/1.1 403 Forbidden\r\nX-Airlock-Denied: ${to.reason}\r\n\r\n`)
      return
    }
    const o = this.track({
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
      if (head.length > 0) {
        o.event.bytesUp += head.length
        upstream.write(head)
      }
      client.on('data', (c: Buffer) => (o.event.bytesUp += c.length))
      upstream.on('data', (c: Buffer) => (o.event.bytesDown += c.length))
      client.pipe(upstream)
      upstream.pipe(client)
    })
    const done = (): void => {
      upstream.destroy()
      client.destroy()
      this.finish(o)
    }
    upstream.on('close', done)
    client.on('close', done)
  }

  private async onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const raw = req.url ?? ''
    if (raw.startsWith('/')) return this.onCredential(req, res, raw)
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      this.deny('http', req.method ?? '?', raw.slice(0, 200), 0, 'bad-request', 'not a URL')
      res.writeHead(400).end()
      return
    }
    const hostname = url.hostname.replace(/^\[|\]$/g, '')
    if (url.protocol === 'http:' && this.config.selfNames.includes(normalizeHost(hostname) ?? '')) {
      return this.onCredential(req, res, url.pathname + url.search)
    }
    const port = url.port !== '' ? Number(url.port) : 80
    if (url.protocol !== 'http:') {
      this.deny('http', req.method ?? '?', url.hostname, port, 'bad-request', 'only http:// here')
      res.writeHead(400).end()
      return
    }
    const check = checkHost(this.config.allow, this.config.hostMap, url.hostname, port)
    if (!check.ok) {
      this.deny('http', req.method ?? '?', url.hostname, port, check.reason, check.detail)
      res.writeHead(403, { 'x-airlock-denied': check.reason }).end()
      return
    }
    const to = await this.resolve(check.host, port, check.mapping)
    if ('reason' in to) {
      this.deny('http', req.method ?? '?', check.host, port, to.reason, to.detail)
      res.writeHead(403, { 'x-airlock-denied': to.reason }).end()
      return
    }
    const headers = forwardHeaders(req.headers, [])
    headers.host = url.host
    const o = this.track({
      type: 'egress',
      time: new Date().toISOString(),
      kind: 'http',
      method: req.method ?? '?',
      host: check.host,
      port,
      allowed: true,
      address: to.address,
      bytesUp: 0,
      bytesDown: 0,
      durationMs: 0
    })
    const up = http.request({
      host: to.address,
      port: to.port,
      method: req.method,
      path: url.pathname + url.search,
      headers,
      agent: this.httpAgent,
      setHost: false
    })
    this.pipeExchange(req, res, up, o)
  }

  private pipeExchange(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    up: http.ClientRequest,
    o: { event: EgressEvent; started: number },
    record?: { request: Recorder; response: Recorder; onEnd: (status: number) => void }
  ): void {
    up.setTimeout(IDLE_MS, () => up.destroy(new Error('idle timeout')))
    req.on('data', (c: Buffer) => {
      o.event.bytesUp += c.length
      record?.request.push(c)
    })
    req.pipe(up)
    up.on('response', (upRes) => {
      o.event.status = upRes.statusCode
      res.writeHead(upRes.statusCode ?? 502, forwardHeaders(upRes.headers, []))
      upRes.on('data', (c: Buffer) => {
        o.event.bytesDown += c.length
        record?.response.push(c)
      })
      upRes.pipe(res)
      upRes.on('end', () => {
        record?.onEnd(upRes.statusCode ?? 0)
        this.finish(o)
      })
      upRes.on('error', () => res.destroy())
    })
    up.on('error', (error: NodeJS.ErrnoException) => {
      if (o.event.status === undefined) {
        o.event.allowed = false
        o.event.reason = 'connect-failed'
        o.event.detail = this.redact(error.code ?? error.message)
        if (!res.headersSent) res.writeHead(502, { 'x-airlock-denied': 'connect-failed' })
        res.end()
      } else {
        res.destroy()
      }
      this.finish(o)
    })
    res.on('close', () => {
      up.destroy()
      this.finish(o)
    })
  }

  private async onCredential(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    pathAndQuery: string
  ): Promise<void> {
    const m = /^\/([A-Za-z][A-Za-z0-9_]*)(\/[^?#]*)?(\?[^#]*)?$/.exec(pathAndQuery)
    const route = m ? this.config.credentials.find((c) => c.name === m[1]) : undefined
    if (!m || !route) {
      this.deny(
        'credential',
        req.method ?? '?',
        pathAndQuery.slice(0, 200),
        0,
        'bad-request',
        'no such route'
      )
      res.writeHead(404, { 'x-airlock-denied': 'no-route' }).end()
      return
    }
    const upstream = new URL(route.upstream)
    const port = upstream.port !== '' ? Number(upstream.port) : 443
    const host = upstream.hostname
    const mapping = this.config.hostMap.find((h) => h.host === host)
    const to = await this.resolve(host, port, mapping)
    if ('reason' in to) {
      this.deny('credential', req.method ?? '?', host, port, to.reason, to.detail)
      res.writeHead(502, { 'x-airlock-denied': to.reason }).end()
      return
    }
    const path = `${upstream.pathname.replace(/\/$/, '')}${m[2] ?? ''}${m[3] ?? ''}` || '/'
    const headerName = secretHeaderName(route)
    const headers = forwardHeaders(req.headers, [headerName])
    headers.host = upstream.host
    headers['accept-encoding'] = 'identity'
    headers[headerName] = route.header.kind === 'bearer' ? `Bearer ${route.secret}` : route.secret
    const o = this.track({
      type: 'egress',
      time: new Date().toISOString(),
      kind: 'credential',
      method: req.method ?? '?',
      host,
      port,
      allowed: true,
      address: to.address,
      route: route.name,
      bytesUp: 0,
      bytesDown: 0,
      durationMs: 0
    })
    const started = Date.now()
    const request = new Recorder(this.config.maxRecordBytes)
    const response = new Recorder(this.config.maxRecordBytes)
    const up = https.request({
      host: to.address,
      port: to.port,
      servername: net.isIP(host) === 0 ? host : undefined,
      method: req.method,
      path,
      headers,
      agent: this.httpsAgent,
      setHost: false,
      ...(this.secureContext ? { secureContext: this.secureContext } : {})
    })
    let upHeaders: http.IncomingHttpHeaders = {}
    up.on('response', (r) => (upHeaders = r.headers))
    const redact = (s: string): string => this.redact(s)
    this.pipeExchange(req, res, up, o, {
      request,
      response,
      onEnd: (status) =>
        this.emit({
          type: 'transcript',
          time: new Date(started).toISOString(),
          route: route.name,
          method: req.method ?? '?',
          path: redact(path),
          status,
          durationMs: Date.now() - started,
          request: {
            headers: redactHeaders(req.headers, [headerName]),
            body: request.body(redact)
          },
          response: { headers: redactHeaders(upHeaders, [headerName]), body: response.body(redact) }
        })
    })
  }
}

export function secretHeaderName(route: CredentialRoute): string {
  switch (route.header.kind) {
    case 'bearer':
      return 'authorization'
    case 'x-api-key':
      return 'x-api-key'
    case 'x-goog-api-key':
      return 'x-goog-api-key'
    case 'header':
      return route.header.name
  }
}

function forwardHeaders(
  headers: http.IncomingHttpHeaders,
  drop: string[]
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  const connectionListed = String(headers.connection ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue
    const key = k.toLowerCase()
    if (HOP_BY_HOP.has(key) || connectionListed.includes(key) || drop.includes(key)) continue
    if (drop.length > 0 && SECRET_HEADERS.has(key)) continue
    out[key] = v
  }
  return out
}
