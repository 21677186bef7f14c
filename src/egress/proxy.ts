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
import type { Duplex, Readable } from 'node:stream'
import { Budget, type BudgetLimits, type BudgetState } from './budget.js'
import { Redactor } from '../evidence/redact.js'
import { filterResponse } from './reflection.js'
import { parseClientHello } from './sni.js'
import { parseExchange } from './transcript.js'
import type { EgressEvent, ProxyEvent, RecordedBody, TranscriptRecord } from './records.js'
import {
  checkHost,
  isNonPublicAddress,
  normalizeHost,
  pathProblem,
  scopeAllows,
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
  /** max-model-requests / max-model-tokens for the credential routes. */
  budget?: BudgetLimits
}

export type { EgressEvent, ProxyEvent, RecordedBody, TranscriptRecord } from './records.js'

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
/** How long a tunnel may take to send its ClientHello. */
const HELLO_MS = 10_000
/**
 * Headers an agent may not forward: they claim a client address or a proxy chain (an upstream
 * that trusts them would see a forged origin) or speak to a proxy.
 */
function agentOnlyHeader(key: string): boolean {
  return (
    key === 'forwarded' ||
    key === 'via' ||
    key === 'x-real-ip' ||
    key === 'true-client-ip' ||
    key === 'x-client-ip' ||
    key.startsWith('x-forwarded-') ||
    key.startsWith('proxy-')
  )
}

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
  private readonly budget: Budget
  private readonly masker: Redactor

  constructor(
    private readonly config: ProxyConfig,
    private readonly emit: (event: ProxyEvent) => void
  ) {
    this.secureContext = config.extraCa
      ? tls.createSecureContext({ ca: [...tls.rootCertificates, config.extraCa] })
      : undefined
    this.secrets = config.credentials.map((c) => c.secret).filter((s) => s.length > 0)
    this.budget = new Budget(config.budget ?? {})
    this.masker = new Redactor(this.secrets)
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

  get budgetState(): BudgetState {
    return this.budget.state
  }

  /** Masks the credential values in every form (raw, base64, URL-encoded, JSON-escaped, hex). */
  private redact(text: string): string {
    return this.masker.redact(text)
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
    const check0 = checkHost(this.config.allow, this.config.hostMap, target.host, target.port)
    if (!check0.ok) {
      this.deny('connect', 'CONNECT', target.host, target.port, check0.reason, check0.detail)
      client.end(`HTTP/1.1 403 Forbidden\r\nX-Airlock-Denied: ${check0.reason}\r\n\r\n`)
      return
    }
    const check = check0
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
    const headers = forwardRequestHeaders(req.headers, [])
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
    record?: { request: Recorder; response: Recorder; onEnd: (status: number) => void },
    /** Credential routes: the injected values, masked in everything the upstream answers. */
    secrets?: string[]
  ): void {
    up.setTimeout(IDLE_MS, () => up.destroy(new Error('idle timeout')))
    req.on('data', (c: Buffer) => {
      o.event.bytesUp += c.length
      record?.request.push(c)
    })
    req.pipe(up)
    up.on('response', (upRes) => {
      const status = upRes.statusCode ?? 502
      o.event.status = status
      let headers = forwardHeaders(upRes.headers, [])
      let body: Readable = upRes
      let reflected = (): number => 0
      if (secrets) {
        const filtered = filterResponse(upRes, headers, secrets)
        if ('error' in filtered) {
          upRes.destroy()
          o.event.allowed = false
          o.event.reason = 'unsupported-encoding'
          o.event.detail = filtered.error
          o.event.status = 502
          res
            .writeHead(502, {
              'x-airlock-denied': 'unsupported-encoding',
              'content-type': 'text/plain'
            })
            .end(`airlock: the upstream answered ${status} with a ${filtered.error}\n`)
          this.finish(o)
          return
        }
        headers = filtered.headers
        body = filtered.body
        reflected = filtered.reflected
        if (status >= 400) o.event.detail = `the upstream answered ${status}`
      }
      res.writeHead(status, headers)
      const count = (): void => {
        const n = reflected()
        if (n > 0) o.event.reflected = n
      }
      count()
      body.on('data', (c: Buffer) => {
        o.event.bytesDown += c.length
        record?.response.push(c)
        count()
      })
      body.pipe(res)
      body.on('end', () => {
        count()
        record?.onEnd(status)
        this.finish(o)
      })
      body.on('error', () => res.destroy())
    })
    up.on('error', (error: NodeJS.ErrnoException) => {
      if (o.event.status === undefined) {
        const why = this.redact(error.code ?? error.message).replace(/[^\x20-\x7e]/g, '?')
        o.event.allowed = false
        o.event.reason = secrets ? 'upstream-failed' : 'connect-failed'
        o.event.detail = why.slice(0, 200)
        o.event.status = 502
        if (!res.headersSent) {
          res.writeHead(502, {
            'x-airlock-denied': o.event.reason,
            'content-type': 'text/plain'
          })
        }
        res.end(`airlock: the upstream could not be reached (${why.slice(0, 200)})\n`)
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
    const method = req.method ?? '?'
    const m = /^\/([A-Za-z][A-Za-z0-9_]*)(\/[^?#]*)?(\?[^#]*)?$/.exec(pathAndQuery)
    const route = m ? this.config.credentials.find((c) => c.name === m[1]) : undefined
    const refuse = (
      status: number,
      reason: DenyReason,
      detail: string,
      host: string,
      port: number,
      extra: Record<string, string> = {}
    ): void => {
      this.deny('credential', method, host, port, reason, detail)
      res
        .writeHead(status, { 'x-airlock-denied': reason, 'content-type': 'text/plain', ...extra })
        .end(`airlock: ${detail}\n`)
    }
    if (!m || !route) {
      refuse(404, 'bad-request', 'no such credential route', pathAndQuery.slice(0, 200), 0)
      return
    }
    const upstream = new URL(route.upstream)
    const port = upstream.port !== '' ? Number(upstream.port) : 443
    const host = upstream.hostname
    const sub = m[2] ?? '/'
    const problem = pathProblem(sub)
    if (problem !== undefined) {
      refuse(400, 'bad-path', `the path ${problem}; it is refused before any matching`, host, port)
      return
    }
    if (!scopeAllows(route.scope, method, sub)) {
      const allowed = (route.scope ?? []).map((s) => `${s.method} ${s.prefix}`).join(', ')
      refuse(403, 'route-scope', `route ${route.name} allows only ${allowed}`, host, port)
      return
    }
    const over = this.budget.admit()
    if (over !== undefined) {
      this.deny('credential', method, host, port, 'budget-exceeded', over)
      // Anthropic's and OpenAI's SDKs read x-should-retry: the agent stops instead of retrying.
      res
        .writeHead(429, {
          'x-airlock-denied': 'budget-exceeded',
          'x-should-retry': 'false',
          'content-type': 'application/json'
        })
        .end(
          JSON.stringify({
            type: 'error',
            error: {
              type: 'rate_limit_error',
              message: `airlock: ${over}; the run's budget is spent`
            }
          })
        )
      return
    }
    const mapping = this.config.hostMap.find((h) => h.host === host)
    const to = await this.resolve(host, port, mapping)
    if ('reason' in to) {
      refuse(502, to.reason, to.detail, host, port)
      return
    }
    const path = `${upstream.pathname.replace(/\/$/, '')}${m[2] ?? ''}${m[3] ?? ''}` || '/'
    const headerName = secretHeaderName(route)
    const headers = forwardRequestHeaders(req.headers, [headerName])
    headers.host = upstream.host
    headers['accept-encoding'] = 'identity'
    headers[headerName] = route.header.kind === 'bearer' ? `Bearer ${route.secret}` : route.secret
    const o = this.track({
      type: 'egress',
      time: new Date().toISOString(),
      kind: 'credential',
      method,
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
    let up: http.ClientRequest
    try {
      up = https.request({
        host: to.address,
        port: to.port,
        servername: net.isIP(host) === 0 ? host : undefined,
        method,
        path,
        headers,
        agent: this.httpsAgent,
        setHost: false,
        ...(this.secureContext ? { secureContext: this.secureContext } : {})
      })
    } catch (error) {
      // A header Node refuses (the values are checked at start; this is the last guard).
      const why = (error as NodeJS.ErrnoException).code ?? 'invalid request'
      o.event.allowed = false
      o.event.reason = 'upstream-failed'
      o.event.detail = why
      o.event.status = 502
      res
        .writeHead(502, { 'x-airlock-denied': 'upstream-failed', 'content-type': 'text/plain' })
        .end(`airlock: the request could not be sent upstream (${why})\n`)
      this.finish(o)
      return
    }
    let upHeaders: http.IncomingHttpHeaders = {}
    up.on('response', (r) => (upHeaders = r.headers))
    const redact = (s: string): string => this.redact(s)
    this.pipeExchange(
      req,
      res,
      up,
      o,
      {
        request,
        response,
        onEnd: (status) => {
          const record: TranscriptRecord = {
            type: 'transcript',
            time: new Date(started).toISOString(),
            route: route.name,
            method,
            path: redact(path),
            status,
            durationMs: Date.now() - started,
            request: {
              headers: redactHeaders(req.headers, [headerName]),
              body: request.body(redact)
            },
            response: {
              // As the agent got them: the values masked (a reflecting upstream echoes the key).
              headers: Object.fromEntries(
                Object.entries(redactHeaders(upHeaders, [headerName])).map(([k, v]) => [
                  redact(k),
                  redact(v)
                ])
              ),
              body: response.body(redact)
            }
          }
          const ex = parseExchange(record)
          this.budget.addTokens(ex.inputTokens + ex.outputTokens)
          this.emit(record)
        }
      },
      this.secrets
    )
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

function forwardRequestHeaders(
  headers: http.IncomingHttpHeaders,
  drop: string[]
): Record<string, string | string[]> {
  const out = forwardHeaders(headers, drop)
  for (const key of Object.keys(out)) if (agentOnlyHeader(key)) delete out[key]
  return out
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
