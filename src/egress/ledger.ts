// The egress ledger: what the allowlist was used for. Allowed hosts the agent used (requests,
// bytes), allowed rules it never used (candidates to drop) and denied hosts with the one-line fix.
// Built on the host from the proxy's events; every host is the agent's doing, so only name
// characters are kept.
import type { CredentialRoute } from './credential-routes.js'
import { HOST_GROUPS, HOST_GROUPS_VERSION, groupUsedHosts } from './host-groups.js'
import { DEFAULT_PORTS, isIpLiteral, ruleMatches } from './host-rules.js'
import type { DenyReason, HostRule } from './host-rules.js'
import type { EgressEvent } from './records.js'

export interface LedgerUse {
  /** host, or host:port when the port is not 443 or 80. */
  host: string
  requests: number
  /** Bytes both ways (a tunnel's bytes, or the bodies of plain HTTP and credential routes). */
  bytes: number
  /** The credentials route it went through, when it did. */
  route?: string
}

export interface LedgerDenial {
  host: string
  attempts: number
  reason: DenyReason
  /** For a route-scope refusal: the method the agent used. */
  method?: string
  /** The one-line fix (ledgerFix). */
  fix: string
}

export interface EgressLedger {
  /** The version of the host groups table the names in `groups` stood for (docs/egress.md). */
  groupsVersion: number
  groups: string[]
  used: LedgerUse[]
  /** allow-hosts entries no request used: a named group whose hosts all went unused, or a rule. */
  unused: string[]
  denied: LedgerDenial[]
}

const NAME = /^[A-Za-z0-9.-]{1,253}$/
const MAX_ROWS = 50

/** host, or host:port when the port is not a default one. */
export function hostLabel(host: string, port: number): string {
  return DEFAULT_PORTS.includes(port) || port <= 0 ? host : `${host}:${port}`
}

function ruleText(rule: HostRule): string {
  const name = `${rule.wildcard ? '*.' : ''}${rule.host}`
  return rule.ports.join() === DEFAULT_PORTS.join() ? name : `${name}:${rule.ports.join(',')}`
}

/**
 * The one-line fix for a denial, from its reason and host only (a renderer recomputes it rather
 * than trusting a stored string). `routeHost`: the host is a credentials route's upstream;
 * `telemetry`: the agent CLI's own telemetry.
 */
export function ledgerFix(
  d: { host: string; reason: DenyReason; method?: string },
  routeHost = false,
  telemetry = false
): string {
  const h = `\`${d.host}\``
  switch (d.reason) {
    case 'not-allowlisted':
      if (routeHost) return `leave it: the model API is reached through its credentials route`
      if (telemetry) return `leave it: telemetry of the agent's CLI, which it does not need`
      return `add ${h} to allow-hosts if the agent needs it`
    case 'ip-literal':
      return `use a host name: IP addresses are never allowed (host-map maps a name to one)`
    case 'private-address':
      return `${h} resolves to a private address; if intended, map it with host-map`
    case 'route-scope':
    case 'method-not-allowed':
      return `widen the route's allow= (e.g. allow=${d.method ?? 'METHOD'} /prefix) if the call is meant`
    case 'dns-failed':
    case 'connect-failed':
    case 'upstream-failed':
      return `${h} could not be reached; check the name (or map it with host-map)`
    case 'sni-mismatch':
      return `the TLS name differed from the name asked for: the client must use one name`
    case 'budget-exceeded':
      return `raise max-model-requests / max-model-tokens / max-cost-usd if the run needs more`
    default:
      return `malformed request: nothing to allow`
  }
}

export function buildLedger(
  events: EgressEvent[],
  rules: HostRule[],
  groups: string[],
  credentials: Pick<CredentialRoute, 'upstream'>[],
  isTelemetry: (host: string) => boolean = () => false
): EgressLedger {
  const used = new Map<string, LedgerUse>()
  const denied = new Map<string, LedgerDenial>()
  const usedRules = new Set<HostRule>()
  const routeHosts = new Set(credentials.map((c) => new URL(c.upstream).hostname.toLowerCase()))
  for (const e of events) {
    const host = e.host.toLowerCase()
    if (!NAME.test(host) && !isIpLiteral(host)) continue
    if (e.allowed) {
      for (const r of rules) if (ruleMatches(r, host, e.port)) usedRules.add(r)
      const key = `${hostLabel(host, e.port)}|${e.route ?? ''}`
      const row = used.get(key) ?? {
        host: hostLabel(host, e.port),
        requests: 0,
        bytes: 0,
        ...(e.route !== undefined && /^[A-Z0-9_]{1,64}$/.test(e.route) ? { route: e.route } : {})
      }
      row.requests++
      row.bytes += Math.max(0, e.bytesUp || 0) + Math.max(0, e.bytesDown || 0)
      used.set(key, row)
      continue
    }
    if (e.reason === undefined || e.reason === 'bad-request') continue
    const method = /^[A-Z]{1,16}$/.test(e.method) ? e.method : undefined
    const scoped = e.reason === 'route-scope' || e.reason === 'method-not-allowed'
    const key = `${hostLabel(host, e.port)}|${e.reason}|${scoped ? (method ?? '') : ''}`
    const row = denied.get(key) ?? {
      host: hostLabel(host, e.port),
      attempts: 0,
      reason: e.reason,
      ...(scoped && method !== undefined ? { method } : {}),
      fix: ''
    }
    row.attempts++
    row.fix = ledgerFix(row, routeHosts.has(host), isTelemetry(host))
    denied.set(key, row)
  }
  // Unused: whole named groups by name, the rest by rule.
  const unusedRules = rules.filter((r) => !usedRules.has(r))
  const named = Object.fromEntries(
    groups.filter((g) => HOST_GROUPS[g] !== undefined).map((g) => [g, HOST_GROUPS[g]])
  )
  const exact = unusedRules.filter((r) => !r.wildcard && r.ports.join() === DEFAULT_PORTS.join())
  const whole = groupUsedHosts(
    exact.map((r) => r.host),
    named
  ).groups
  const inWhole = new Set(whole.flatMap((g) => named[g]))
  const unused = [
    ...whole,
    ...[...new Set(unusedRules.filter((r) => r.wildcard || !inWhole.has(r.host)).map(ruleText))]
  ]
  const byCount =
    <T extends { host: string }>(n: (t: T) => number) =>
    (a: T, b: T) =>
      n(b) - n(a) || a.host.localeCompare(b.host)
  return {
    groupsVersion: HOST_GROUPS_VERSION,
    groups: [...groups].sort(),
    used: [...used.values()].sort(byCount((u) => u.requests)).slice(0, MAX_ROWS),
    unused: unused.slice(0, MAX_ROWS),
    denied: [...denied.values()].sort(byCount((d) => d.attempts)).slice(0, MAX_ROWS)
  }
}
