// What the proxy's handlers share: its configuration, the connections still open (each reported
// once, when it ends), the upstream agents, the budget and the masking of the credential values.
import * as dns from 'node:dns'
import type * as http from 'node:http'
import type * as https from 'node:https'
import type * as tls from 'node:tls'
import type { Budget, BudgetLimits } from '../budget.js'
import type { EgressEvent, ProxyEvent } from '../records.js'
import type { CredentialRoute } from '../credential-routes.js'
import {
  isNonPublicAddress,
  type DenyReason,
  type HostMapping,
  type HostRule
} from '../host-rules.js'

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
  /** max-model-requests / max-model-tokens / max-cost-usd for the credential routes. */
  budget?: BudgetLimits
}

export interface ProxyContext {
  readonly config: ProxyConfig
  readonly connections: Connections
  readonly budget: Budget
  /** Upstream connections are kept alive and reused (TLS handshakes and CA parsing are costly). */
  readonly httpAgent: http.Agent
  readonly httpsAgent: https.Agent
  readonly secureContext: tls.SecureContext | undefined
  /** The credential values, masked in everything the upstreams answer. */
  readonly secrets: string[]
  /** Masks the credential values in every form (raw, base64, URL-encoded, JSON-escaped, hex). */
  readonly redact: (text: string) => string
  readonly emit: (event: ProxyEvent) => void
}

/** How long a connection may stay idle. */
export const IDLE_MS = 10 * 60_000

/** A connection in progress: its event is emitted once, when it ends or the proxy closes. */
export interface Open {
  event: EgressEvent
  started: number
}

export class Connections {
  private readonly open = new Set<Open>()

  constructor(
    private readonly emit: (event: ProxyEvent) => void,
    private readonly redact: (text: string) => string
  ) {}

  track(event: EgressEvent): Open {
    const o = { event, started: Date.now() }
    this.open.add(o)
    return o
  }

  finish(o: Open): void {
    if (!this.open.delete(o)) return
    o.event.durationMs = Date.now() - o.started
    this.emit(o.event)
  }

  /** Reports the connections still open, with their bytes so far. */
  finishAll(): void {
    for (const o of this.open) this.finish(o)
    this.open.clear()
  }

  deny(
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
}

/** The address to connect to: the host-map entry, or a public address from DNS. */
export async function resolveUpstream(
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
