// The egress policy as data, and the pure decisions made with it. Used on the host (to validate
// the inputs) and inside the proxy container (to decide each connection); no I/O here.
import * as net from 'node:net'
import ipaddr from 'ipaddr.js'

/** One `allow-hosts` entry: an exact name or `*.suffix`, and the ports it opens. */
export interface HostRule {
  /** Lower-case name without a trailing dot; for a wildcard, the suffix after `*.`. */
  host: string
  wildcard: boolean
  ports: number[]
}

/** One `host-map` entry: connections to `host` go to `address` (and `port` when given). */
export interface HostMapping {
  host: string
  address: string
  port?: number
}

export const DEFAULT_PORTS = [443, 80]

/** Hostnames: letters, digits, hyphens; dot-separated labels; at most 253 characters. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/
/** Lower-cases, drops one trailing dot; returns undefined when it is not a DNS name. */
export function normalizeHost(raw: string): string | undefined {
  let h = raw.trim().toLowerCase()
  if (h.endsWith('.')) h = h.slice(0, -1)
  if (h === '' || h.length > 253) return undefined
  if (!h.split('.').every((l) => LABEL.test(l))) return undefined
  return h
}

/** True for anything that names an address instead of a host: 1.2.3.4, [::1], 0x7f.1, 2130706433. */
export function isIpLiteral(raw: string): boolean {
  const h = raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw
  if (net.isIP(h) !== 0) return true
  // Forms that resolvers read as IPv4 (inet_aton): every label numeric, hex or octal.
  const labels = h.split('.')
  return labels.length <= 4 && labels.every((l) => /^(0x[0-9a-f]*|[0-9]+)$/i.test(l))
}

function port(raw: string, what: string): number {
  const n = Number(raw)
  if (!/^\d+$/.test(raw) || n < 1 || n > 65535) throw new Error(`${what}: "${raw}" is not a port`)
  return n
}

/** `api.example.com`, `*.example.com`, `host:8443`, `*.example.com:443,80` is not allowed (one port). */
export function parseHostRule(raw: string): HostRule {
  const t = raw.trim()
  const m = /^(\*\.)?([^:*\s]+)(?::(\d+))?$/.exec(t)
  if (!m) {
    throw new Error(
      `"${raw}" is not a host; use an exact name (api.example.com), a wildcard (*.example.com), optionally :port`
    )
  }
  const host = normalizeHost(m[2])
  if (host === undefined || isIpLiteral(m[2])) {
    throw new Error(`"${raw}" is not a DNS name (IP addresses are never allowed; use host-map)`)
  }
  if (m[1] !== undefined && !host.includes('.')) {
    throw new Error(`"${raw}": a wildcard needs at least two labels after "*." (*.example.com)`)
  }
  return {
    host,
    wildcard: m[1] !== undefined,
    ports: m[3] !== undefined ? [port(m[3], raw)] : [...DEFAULT_PORTS]
  }
}

/** `name=ip` or `name=ip:port` or `name=[v6]:port`. */
export function parseHostMapping(raw: string): HostMapping {
  const t = raw.trim()
  const eq = t.indexOf('=')
  const host = eq > 0 ? normalizeHost(t.slice(0, eq)) : undefined
  if (host === undefined || isIpLiteral(t.slice(0, eq))) {
    throw new Error(`"${raw}" is not NAME=ADDRESS[:PORT] (e.g. api.test=172.18.0.5:8443)`)
  }
  const target = t.slice(eq + 1)
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(target)
  const v4 = /^([0-9.]+)(?::(\d+))?$/.exec(target)
  const m = v6 ?? v4
  if (!m || net.isIP(m[1]) === 0) {
    throw new Error(`"${raw}": "${target}" is not an IP address, optionally with :port`)
  }
  return { host, address: m[1], ...(m[2] !== undefined ? { port: port(m[2], raw) } : {}) }
}

export function ruleMatches(rule: HostRule, host: string, port: number): boolean {
  if (!rule.ports.includes(port)) return false
  if (rule.wildcard) return host.endsWith(`.${rule.host}`)
  return host === rule.host
}

/** Why the proxy refused something (`reason` in egress.jsonl). */
export const DENY_REASONS = [
  'bad-request',
  'ip-literal',
  'not-allowlisted',
  'private-address',
  'dns-failed',
  'connect-failed',
  'method-not-allowed',
  'route-scope',
  'bad-path',
  'sni-mismatch',
  'upstream-failed',
  'unsupported-encoding',
  'budget-exceeded'
] as const
export type DenyReason = (typeof DENY_REASONS)[number]

export type HostCheck =
  | { ok: true; host: string; mapping?: HostMapping }
  | { ok: false; reason: DenyReason; detail: string }

/** The name check, before any resolution: syntax, IP literals, the allowlist. */
export function checkHost(
  rules: HostRule[],
  mappings: HostMapping[],
  rawHost: string,
  port: number
): HostCheck {
  if (isIpLiteral(rawHost)) {
    return { ok: false, reason: 'ip-literal', detail: 'IP addresses are never allowed' }
  }
  const host = normalizeHost(rawHost)
  if (host === undefined) return { ok: false, reason: 'bad-request', detail: 'not a DNS name' }
  if (!rules.some((r) => ruleMatches(r, host, port))) {
    return { ok: false, reason: 'not-allowlisted', detail: `${host}:${port} is not in allow-hosts` }
  }
  const mapping = mappings.find((m) => m.host === host)
  return mapping ? { ok: true, host, mapping } : { ok: true, host }
}

/**
 * Loopback, private, link-local (cloud metadata), shared, documentation, multicast, reserved: every
 * range ipaddr.js names except `unicast`. IPv6 forms that carry an IPv4 address (IPv4-mapped,
 * IPv4-compatible, NAT64 64:ff9b::/96 and /48, 6to4 2002::/16, Teredo 2001::/32) are judged by the
 * address they embed, and refused when it is not public.
 */
export function isNonPublicAddress(address: string): boolean {
  if (net.isIP(address) === 0 || !ipaddr.isValid(address)) return true
  const ip = ipaddr.parse(address)
  if (ip.kind() === 'ipv4') return (ip as ipaddr.IPv4).range() !== 'unicast'
  const v6 = ip as ipaddr.IPv6
  const range = v6.range()
  const bytes = v6.toByteArray()
  const v4 = (b: number[]): boolean => isNonPublicAddress(ipaddr.fromByteArray(b).toString())
  switch (range) {
    case 'ipv4Mapped':
    case 'rfc6145':
    case 'rfc6052':
      return v4(bytes.slice(12, 16))
    case '6to4':
      return v4(bytes.slice(2, 6))
    case 'teredo':
      // The client's address, obfuscated (inverted) in the last 32 bits; the server's in bits 32-63.
      return v4(bytes.slice(4, 8)) || v4(bytes.slice(12, 16).map((b) => b ^ 0xff))
    case 'unicast':
      // IPv4-compatible (::a.b.c.d, deprecated) is not named by ipaddr.js.
      if (bytes.slice(0, 12).every((b) => b === 0)) return true
      return false
    default:
      return true
  }
}

/** Splits `host:port` / `[v6]:port` (CONNECT targets); undefined when malformed. */
export function splitHostPort(
  authority: string,
  defaultPort?: number
): { host: string; port: number } | undefined {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(authority)
  const m = v6 ?? /^([^:[\]]+)(?::(\d+))?$/.exec(authority)
  if (!m) return undefined
  const p = m[2] !== undefined ? Number(m[2]) : defaultPort
  if (p === undefined || !Number.isInteger(p) || p < 1 || p > 65535) return undefined
  return { host: v6 ? `[${m[1]}]` : m[1], port: p }
}
