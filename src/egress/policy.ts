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

/** How the real secret is sent upstream. */
export type HeaderForm =
  | { kind: 'bearer' }
  | { kind: 'x-api-key' }
  | { kind: 'x-goog-api-key' }
  | { kind: 'header'; name: string }

/** One `credentials` entry, without the secret value. */
export interface CredentialRoute {
  /** Upper-case identifier; also the first path segment of the base URL inside the sandbox. */
  name: string
  /** https URL of the upstream (an optional path is kept as the base path). */
  upstream: string
  /** Name of the host variable that holds the secret. */
  secretEnv: string
  header: HeaderForm
  /** Variable that receives the base URL inside the sandbox (default NAME_BASE_URL). */
  baseUrlEnv: string
  /** Variable that receives the placeholder key inside the sandbox (default NAME_API_KEY). */
  keyEnv: string
  /** What the route may be used for (`allow=POST /v1/messages`); absent: any method and path. */
  scope?: RouteScope[]
}

/** One `allow=` entry of a credential route: a method (or `*`) and a path prefix. */
export interface RouteScope {
  method: string
  prefix: string
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

const HEADER_NAME = /^[A-Za-z0-9-]+$/
function headerForm(raw: string): HeaderForm {
  const t = raw.trim().toLowerCase()
  if (t === 'bearer' || t === 'authorization') return { kind: 'bearer' }
  if (t === 'x-api-key') return { kind: 'x-api-key' }
  if (t === 'x-goog-api-key') return { kind: 'x-goog-api-key' }
  const m = /^header:(.+)$/.exec(raw.trim())
  if (m && HEADER_NAME.test(m[1])) return { kind: 'header', name: m[1].toLowerCase() }
  throw new Error(
    `"${raw}" is not a header form; use bearer, x-api-key, x-goog-api-key or header:Header-Name`
  )
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
/**
 * `NAME=https://upstream[/base]|SECRET_ENV|HEADER[|BASE_URL_ENV[|KEY_ENV]]`, e.g.
 * `ANTHROPIC=https://api.anthropic.com|ANTHROPIC_KEY|x-api-key`.
 */
export function parseCredential(raw: string): CredentialRoute {
  const all = raw.split('|').map((s) => s.trim())
  const scopes = all.filter((p, i) => i >= 3 && p.startsWith('allow='))
  const parts = all.filter((p, i) => !(i >= 3 && p.startsWith('allow=')))
  const eq = parts[0].indexOf('=')
  const name = eq > 0 ? parts[0].slice(0, eq) : ''
  const url = parts[0].slice(eq + 1)
  if (!/^[A-Z][A-Z0-9_]{0,31}$/.test(name) || parts.length < 3 || parts.length > 5) {
    throw new Error(
      `"${raw}" is not NAME=https://upstream|SECRET_ENV|HEADER[|BASE_URL_ENV[|KEY_ENV]][|allow=METHOD /path,...] (NAME in capitals, e.g. ANTHROPIC=https://api.anthropic.com|ANTHROPIC_KEY|x-api-key|allow=POST /v1/messages)`
    )
  }
  if (scopes.length > 1) throw new Error(`${name}: give allow= once (entries separated by commas)`)
  const scope = scopes.length === 1 ? parseScope(name, scopes[0].slice('allow='.length)) : undefined
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new Error(`${name}: "${url}" is not a URL`)
  }
  if (parsed.protocol !== 'https:' || parsed.username !== '' || parsed.password !== '') {
    throw new Error(`${name}: "${url}" must be an https:// URL without user info`)
  }
  if (parsed.search !== '' || parsed.hash !== '') {
    throw new Error(`${name}: "${url}" must not have a query or fragment`)
  }
  const host = normalizeHost(parsed.hostname)
  if (host === undefined || isIpLiteral(parsed.hostname)) {
    throw new Error(`${name}: the upstream must be a DNS name (use host-map to pin its address)`)
  }
  const envs = [parts[1], parts[3], parts[4]].filter((e): e is string => e !== undefined)
  for (const e of envs) {
    if (!ENV_NAME.test(e)) throw new Error(`${name}: "${e}" is not a variable name`)
  }
  return {
    name,
    upstream: `https://${host}${parsed.port !== '' ? `:${parsed.port}` : ''}${parsed.pathname.replace(/\/+$/, '')}`,
    secretEnv: parts[1],
    header: headerForm(parts[2]),
    baseUrlEnv: parts[3] || `${name}_BASE_URL`,
    keyEnv: parts[4] || `${name}_API_KEY`,
    ...(scope ? { scope } : {})
  }
}

const METHOD = /^(\*|[A-Z]{3,10})$/
/** `POST /v1/messages, GET /v1/models`: a method (or `*`) and a path prefix per entry. */
function parseScope(name: string, raw: string): RouteScope[] {
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')
  if (entries.length === 0) throw new Error(`${name}: allow= needs at least one "METHOD /path"`)
  return entries.map((e) => {
    const m = /^(\S+)\s+(\/\S*)$/.exec(e)
    if (!m || !METHOD.test(m[1])) {
      throw new Error(
        `${name}: "${e}" is not "METHOD /path-prefix" (e.g. POST /v1/messages; * for any method)`
      )
    }
    const prefix = m[2].replace(/\/+$/, '') || '/'
    if (pathProblem(prefix) !== undefined) {
      throw new Error(`${name}: "${m[2]}" is not a plain path (${pathProblem(prefix)})`)
    }
    return { method: m[1], prefix }
  })
}

/**
 * Why a request path (the part after the route name) cannot be forwarded: dot segments, encoded
 * dots, slashes or backslashes, `//`, percent-encoded percent signs (double encoding) or controls.
 * Checked before any matching, so no form can climb out of the upstream's base path.
 */
export function pathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'does not start with /'
  if (path.includes('//')) return 'contains //'
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  if (/[\\\x00-\x20\x7f]/.test(path)) return 'contains a backslash, space or control character'
  if (/%(2e|2f|5c|25|00)/i.test(path)) return 'contains an encoded dot, slash, backslash or percent'
  if (path.split('/').some((seg) => seg === '.' || seg === '..'))
    return 'contains a . or .. segment'
  return undefined
}

/** True when the route's scope (if any) allows `method` on `path` (already checked by pathProblem). */
export function scopeAllows(
  scope: RouteScope[] | undefined,
  method: string,
  path: string
): boolean {
  if (scope === undefined) return true
  return scope.some(
    (s) =>
      (s.method === '*' || s.method === method.toUpperCase()) &&
      (s.prefix === '/' || path === s.prefix || path.startsWith(`${s.prefix}/`))
  )
}

/** The longest credential value accepted. */
export const MAX_SECRET_BYTES = 1024

/**
 * Why a credential value cannot be sent in a header (undefined when it can): printable ASCII only,
 * no surrounding spaces, at least `minLength` (shorter values could not be masked) and at most
 * 1 KiB. Never echoes the value.
 */
export function secretProblem(value: string, minLength: number): string | undefined {
  if (value.length > MAX_SECRET_BYTES) return `is longer than ${MAX_SECRET_BYTES} bytes`
  if (value.length < minLength) {
    return `is shorter than ${minLength} characters (too short to be masked in the evidence)`
  }
  if (/[\r\n\0]/.test(value)) return 'contains a line break or NUL'
  if (/[^\x20-\x7e]/.test(value)) {
    return 'contains a character that is not printable ASCII (a control character or non-ASCII)'
  }
  if (value !== value.trim()) return 'starts or ends with a space'
  return undefined
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
