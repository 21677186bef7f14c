// Credential routes: the agent asks `/NAME/...` and the proxy forwards to the route's upstream over
// TLS with the real secret added; the exchange is recorded (values masked) and counted in the budget.
import type * as http from 'node:http'
import * as https from 'node:https'
import * as net from 'node:net'
import type { TranscriptRecord } from '../records.js'
import { overrideProblem, pathProblem, scopeAllows } from '../credential-routes.js'
import type { DenyReason } from '../host-rules.js'
import { parseExchange } from '../transcript.js'
import { resolveUpstream } from './proxy-context.js'
import type { ProxyContext } from './proxy-context.js'
import { pipeExchange } from './exchange.js'
import { forwardRequestHeaders, redactHeaders, secretHeaderName } from './headers.js'
import { Recorder } from './recorder.js'

/**
 * A credential route (`/NAME/...`): checked against the route's path rules, scope and budget, then
 * forwarded over TLS with the real secret added, and recorded in the transcript.
 */
export async function forwardCredential(
  ctx: ProxyContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  pathAndQuery: string
): Promise<void> {
  const method = req.method ?? '?'
  const m = /^\/([A-Za-z][A-Za-z0-9_]*)(\/[^?#]*)?(\?[^#]*)?$/.exec(pathAndQuery)
  const route = m ? ctx.config.credentials.find((c) => c.name === m[1]) : undefined
  const refuse = (
    status: number,
    reason: DenyReason,
    detail: string,
    host: string,
    port: number,
    extra: Record<string, string> = {}
  ): void => {
    ctx.connections.deny('credential', method, host, port, reason, detail)
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
  const override = route.scope === undefined ? undefined : overrideProblem(req.headers, m[3] ?? '')
  if (override !== undefined) {
    refuse(403, 'route-scope', `route ${route.name} is scoped; the request ${override}`, host, port)
    return
  }
  const over = ctx.budget.admit()
  if (over !== undefined) {
    ctx.connections.deny('credential', method, host, port, 'budget-exceeded', over)
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
  const mapping = ctx.config.hostMap.find((h) => h.host === host)
  const to = await resolveUpstream(host, port, mapping)
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
  const o = ctx.connections.track({
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
  const request = new Recorder(ctx.config.maxRecordBytes)
  const response = new Recorder(ctx.config.maxRecordBytes)
  let up: http.ClientRequest
  try {
    up = https.request({
      host: to.address,
      port: to.port,
      servername: net.isIP(host) === 0 ? host : undefined,
      method,
      path,
      headers,
      agent: ctx.httpsAgent,
      setHost: false,
      ...(ctx.secureContext ? { secureContext: ctx.secureContext } : {})
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
    ctx.connections.finish(o)
    return
  }
  let upHeaders: http.IncomingHttpHeaders = {}
  up.on('response', (r) => (upHeaders = r.headers))
  const redact = (s: string): string => ctx.redact(s)
  pipeExchange(
    ctx,
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
        ctx.budget.addExchange(ex.model, ex.inputTokens, ex.outputTokens)
        ctx.emit(record)
      }
    },
    ctx.secrets
  )
}
