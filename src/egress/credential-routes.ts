// Credential routes (`credentials`): how each is written, what it may be used for (its scope and
// the paths refused before any matching), and which secret values can be sent at all. Pure.
import { isIpLiteral, normalizeHost } from './host-rules.js'

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

/**
 * Headers that tell a server, a framework or a gateway in front of it to treat the request as
 * another method or another URL than the one the scope checked.
 */
const OVERRIDE_HEADERS = new Set([
  'x-http-method-override',
  'x-http-method',
  'x-method-override',
  'x-original-method',
  'x-original-url',
  'x-original-uri',
  'x-rewrite-url',
  'x-override-url',
  'x-envoy-original-path',
  'x-envoy-original-method'
])

/** Query parameters with the same effect (`_method` in Rails and Laravel, and the like). */
const OVERRIDE_PARAMS = new Set([
  '_method',
  'method',
  '_httpmethod',
  'httpmethod',
  '$method',
  'x-http-method-override',
  'x-method-override'
])

/**
 * Why a request on a scoped route must not be forwarded: it carries a method or URL override
 * (header or query parameter), or a form body (where `_method` rides too). The scope allows one
 * method and path; nothing else may name another.
 */
export function overrideProblem(
  headers: Record<string, string | string[] | undefined>,
  query: string
): string | undefined {
  for (const key of Object.keys(headers)) {
    if (OVERRIDE_HEADERS.has(key.toLowerCase()))
      return `carries the method/URL override header ${key.toLowerCase()}`
  }
  for (const pair of query.replace(/^\?/, '').split('&')) {
    let name: string
    try {
      name = decodeURIComponent(pair.split('=')[0].replace(/\+/g, ' '))
    } catch {
      return 'has a query parameter that is not valid percent-encoding'
    }
    if (OVERRIDE_PARAMS.has(name.trim().toLowerCase()))
      return `carries the method override parameter ${name.trim().toLowerCase()}`
  }
  const type = String(headers['content-type'] ?? '').toLowerCase()
  if (/^\s*(application\/x-www-form-urlencoded|multipart\/form-data)/.test(type))
    return `has a form body (${type.split(';')[0].trim()}), which can carry a method override`
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
