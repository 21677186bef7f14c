// The egress proxy: runs inside its own hardened container (bundled as dist/proxy.js), the only
// thing the agent's network reaches. HTTP CONNECT and plain HTTP to allowlisted names only; the
// proxy resolves names itself and connects to the address it checked. Credential routes
// (`/NAME/...`) are forwarded over TLS with the real secret added, and recorded.
// The handlers live in proxy/: tunnel.ts (CONNECT), credential.ts, exchange.ts, headers.ts.
import * as http from 'node:http'
import * as https from 'node:https'
import type * as net from 'node:net'
import * as tls from 'node:tls'
import type { Duplex } from 'node:stream'
import { Budget, type BudgetState } from './budget.js'
import { Redactor } from '../redact.js'
import type { ProxyEvent } from './records.js'
import { checkHost, normalizeHost } from './host-rules.js'
import { Connections, resolveUpstream } from './proxy/proxy-context.js'
import type { ProxyConfig, ProxyContext } from './proxy/proxy-context.js'
import { forwardCredential } from './proxy/credential.js'
import { pipeExchange } from './proxy/exchange.js'
import { forwardRequestHeaders } from './proxy/headers.js'
import { tunnel } from './proxy/tunnel.js'

export type { ProxyConfig } from './proxy/proxy-context.js'
export type { EgressEvent, ProxyEvent, RecordedBody, TranscriptRecord } from './records.js'

export class EgressProxy {
  private readonly server: http.Server
  private readonly ctx: ProxyContext

  constructor(config: ProxyConfig, emit: (event: ProxyEvent) => void) {
    const secrets = config.credentials.map((c) => c.secret).filter((s) => s.length > 0)
    const masker = new Redactor(secrets)
    const redact = (text: string): string => masker.redact(text)
    this.ctx = {
      config,
      connections: new Connections(emit, redact),
      budget: new Budget(config.budget ?? {}),
      httpAgent: new http.Agent({ keepAlive: true, maxSockets: 64 }),
      httpsAgent: new https.Agent({ keepAlive: true, maxSockets: 64 }),
      secureContext: config.extraCa
        ? tls.createSecureContext({ ca: [...tls.rootCertificates, config.extraCa] })
        : undefined,
      secrets,
      redact,
      emit
    }
    this.server = http.createServer({ requestTimeout: 0 }, (req, res) => {
      this.onRequest(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(502)
        res.end()
      })
    })
    this.server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      tunnel(this.ctx, req, socket, head).catch(() => socket.destroy())
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
      this.server.listen(this.ctx.config.listen.port, this.ctx.config.listen.host, () => {
        resolve(this.server.address() as net.AddressInfo)
      })
    })
  }

  /** Stops accepting, reports the connections still open with their bytes so far. */
  async close(): Promise<void> {
    this.ctx.connections.finishAll()
    this.server.closeAllConnections?.()
    this.ctx.httpAgent.destroy()
    this.ctx.httpsAgent.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  get budgetState(): BudgetState {
    return this.ctx.budget.state
  }

  /** Plain http:// to an allowlisted host, or a credential route (`/NAME/...`). */
  private async onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const raw = req.url ?? ''
    if (raw.startsWith('/')) return forwardCredential(this.ctx, req, res, raw)
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      this.ctx.connections.deny(
        'http',
        req.method ?? '?',
        raw.slice(0, 200),
        0,
        'bad-request',
        'not a URL'
      )
      res.writeHead(400).end()
      return
    }
    const hostname = url.hostname.replace(/^\[|\]$/g, '')
    if (
      url.protocol === 'http:' &&
      this.ctx.config.selfNames.includes(normalizeHost(hostname) ?? '')
    ) {
      return forwardCredential(this.ctx, req, res, url.pathname + url.search)
    }
    const port = url.port !== '' ? Number(url.port) : 80
    if (url.protocol !== 'http:') {
      this.ctx.connections.deny(
        'http',
        req.method ?? '?',
        url.hostname,
        port,
        'bad-request',
        'only http:// here'
      )
      res.writeHead(400).end()
      return
    }
    const check = checkHost(this.ctx.config.allow, this.ctx.config.hostMap, url.hostname, port)
    if (!check.ok) {
      this.ctx.connections.deny(
        'http',
        req.method ?? '?',
        url.hostname,
        port,
        check.reason,
        check.detail
      )
      res.writeHead(403, { 'x-airlock-denied': check.reason }).end()
      return
    }
    const to = await resolveUpstream(check.host, port, check.mapping)
    if ('reason' in to) {
      this.ctx.connections.deny('http', req.method ?? '?', check.host, port, to.reason, to.detail)
      res.writeHead(403, { 'x-airlock-denied': to.reason }).end()
      return
    }
    const headers = forwardRequestHeaders(req.headers, [])
    headers.host = url.host
    const o = this.ctx.connections.track({
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
      agent: this.ctx.httpAgent,
      setHost: false
    })
    pipeExchange(this.ctx, req, res, up, o)
  }
}
