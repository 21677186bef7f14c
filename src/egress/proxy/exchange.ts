// One HTTP exchange through the proxy: request up, answer down, bytes counted, bodies recorded
// for the transcript, and the answer of a credential route filtered for reflected secrets.
import type * as http from 'node:http'
import type { Readable } from 'node:stream'
import { filterResponse } from '../reflection.js'
import { IDLE_MS } from './proxy-context.js'
import type { Open, ProxyContext } from './proxy-context.js'
import { forwardHeaders } from './headers.js'
import type { Recorder } from './recorder.js'

/**
 * Streams a request upstream and the answer back, counting bytes; for credential routes (`secrets`
 * given) the answer is filtered so that no injected value reflects back to the agent.
 */
export function pipeExchange(
  ctx: ProxyContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  up: http.ClientRequest,
  o: Open,
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
        ctx.connections.finish(o)
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
      ctx.connections.finish(o)
    })
    body.on('error', () => res.destroy())
  })
  up.on('error', (error: NodeJS.ErrnoException) => {
    if (o.event.status === undefined) {
      const why = ctx.redact(error.code ?? error.message).replace(/[^\x20-\x7e]/g, '?')
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
    ctx.connections.finish(o)
  })
  res.on('close', () => {
    up.destroy()
    ctx.connections.finish(o)
  })
}
