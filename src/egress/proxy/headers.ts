// Headers on the way through the proxy: hop-by-hop ones dropped, credentials the agent sends
// dropped, the proxy's own secret header named per route, and redaction for the transcript.
import type * as http from 'node:http'
import type { CredentialRoute } from '../credential-routes.js'

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

export function forwardRequestHeaders(
  headers: http.IncomingHttpHeaders,
  drop: string[]
): Record<string, string | string[]> {
  const out = forwardHeaders(headers, drop)
  for (const key of Object.keys(out)) if (agentOnlyHeader(key)) delete out[key]
  return out
}

export function forwardHeaders(
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
