// `airlock egress suggest`: the minimal allow-hosts list proposed from a run's egress.jsonl (and
// transcript.jsonl for the credentials routes). The files come from a run's output folder — the
// agent's doing — so every line is hostile: only well-formed values of name characters count.
import { HOST_GROUPS, groupUsedHosts } from './host-groups.js'
import { DEFAULT_PORTS, isIpLiteral, normalizeHost } from './host-rules.js'
import { KINDS, fitsShape, isBool, isStr, oneOf } from './lines.js'

export interface HostCount {
  /** A host group name, a host, or host:port off 443/80. */
  entry: string
  requests: number
  /** Requests the proxy refused (the name was not allowed). */
  denied: number
  /** For a group: its hosts with their requests. */
  hosts?: { host: string; requests: number }[]
}

export interface RouteUse {
  route: string
  requests: number
  /** `METHOD /prefix` (the first two path segments, relative to the route), with requests. */
  scopes: { scope: string; requests: number }[]
}

export interface HostSuggestion {
  entries: HostCount[]
  routes: RouteUse[]
  /** Lines that were not a well-formed record, skipped. */
  skipped: number
}

const ROUTE = /^[A-Z][A-Z0-9_]{0,63}$/
const METHOD = /^[A-Z]{1,16}$/
const SEGMENT = /^[A-Za-z0-9._~:@!$&'()*+,;=-]{1,128}$/

function parseLines(text: string): unknown[] {
  const out: unknown[] = []
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    try {
      out.push(JSON.parse(line))
    } catch {
      out.push(undefined)
    }
  }
  return out
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** The fields of an egress line the suggestion reads. */
interface EgressLine {
  kind: string
  host: string
  allowed: boolean
  port: number
  reason?: unknown
}

function isEgressLine(e: unknown): e is EgressLine {
  return (
    isObject(e) &&
    fitsShape(e, {
      type: (t) => t === 'egress',
      kind: oneOf(KINDS),
      host: isStr,
      allowed: isBool,
      port: (p) => Number.isInteger(p) && (p as number) >= 1 && (p as number) <= 65535
    })
  )
}

/** The fields of a transcript line the suggestion reads. */
interface TranscriptLine {
  route: string
  method: string
  path: string
}

function isTranscriptLine(t: unknown): t is TranscriptLine {
  return (
    isObject(t) &&
    fitsShape(t, {
      type: (v) => v === 'transcript',
      route: (r) => isStr(r) && ROUTE.test(r),
      method: (m) => isStr(m) && METHOD.test(m),
      path: isStr
    })
  )
}

/**
 * The suggestion: hosts the agent used or was refused by name (never IP literals; of the refused
 * names, never a credentials route's upstream nor a `skip`ped one such as a CLI's telemetry), a whole group
 * when every host of it was used; the routes with the methods and path prefixes they served.
 * `basePaths`: a route's upstream base path (e.g. OPENAI → /v1), removed from recorded paths.
 */
export function suggestHosts(
  egressJsonl: string,
  transcriptJsonl: string,
  options: { basePaths?: Record<string, string>; skip?: (host: string) => boolean } = {}
): HostSuggestion {
  let skipped = 0
  const counts = new Map<string, { requests: number; denied: number }>()
  const routeHosts = new Set<string>()
  const events: { host: string; port: number; allowed: boolean }[] = []
  for (const e of parseLines(egressJsonl)) {
    if (!isEgressLine(e)) {
      skipped++
      continue
    }
    const host = isIpLiteral(e.host) ? undefined : normalizeHost(e.host)
    if (host === undefined) continue
    if (e.kind === 'credential') {
      routeHosts.add(host)
      continue
    }
    // Denied names only when the name itself was refused: other refusals are not fixed by allowing.
    if (!e.allowed && e.reason !== 'not-allowlisted') continue
    events.push({ host, port: e.port, allowed: e.allowed })
  }
  for (const e of events) {
    // A refused credentials upstream or telemetry name is never proposed; what was allowed and used
    // stays (dropping it would break the next run).
    if (!e.allowed && (routeHosts.has(e.host) || options.skip?.(e.host) === true)) continue
    const key = DEFAULT_PORTS.includes(e.port) ? e.host : `${e.host}:${e.port}`
    const c = counts.get(key) ?? { requests: 0, denied: 0 }
    c.requests++
    if (!e.allowed) c.denied++
    counts.set(key, c)
  }
  const { groups, hosts } = groupUsedHosts([...counts.keys()].filter((k) => !k.includes(':')))
  const entries: HostCount[] = []
  for (const g of groups) {
    const members = HOST_GROUPS[g].map((h) => ({ host: h, requests: counts.get(h)!.requests }))
    entries.push({
      entry: g,
      requests: members.reduce((n, m) => n + m.requests, 0),
      denied: HOST_GROUPS[g].reduce((n, h) => n + counts.get(h)!.denied, 0),
      hosts: members
    })
  }
  for (const h of [...hosts, ...[...counts.keys()].filter((k) => k.includes(':')).sort()]) {
    const c = counts.get(h)!
    entries.push({ entry: h, requests: c.requests, denied: c.denied })
  }
  entries.sort((a, b) => b.requests - a.requests || a.entry.localeCompare(b.entry))

  const routes = new Map<string, { requests: number; scopes: Map<string, number> }>()
  for (const t of parseLines(transcriptJsonl)) {
    if (!isTranscriptLine(t)) {
      skipped++
      continue
    }
    let p = t.path.split('?')[0]
    const base = options.basePaths?.[t.route]?.replace(/\/$/, '')
    if (base !== undefined && base !== '' && (p === base || p.startsWith(`${base}/`)))
      p = p.slice(base.length)
    const segments = p.split('/').filter((s) => s !== '')
    if (!segments.every((s) => SEGMENT.test(s))) {
      skipped++
      continue
    }
    const scope = `${t.method} /${segments.slice(0, 2).join('/')}`
    const r = routes.get(t.route) ?? { requests: 0, scopes: new Map<string, number>() }
    r.requests++
    r.scopes.set(scope, (r.scopes.get(scope) ?? 0) + 1)
    routes.set(t.route, r)
  }
  return {
    entries,
    routes: [...routes.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([route, r]) => ({
        route,
        requests: r.requests,
        scopes: [...r.scopes.entries()]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([scope, requests]) => ({ scope, requests }))
      })),
    skipped
  }
}

/** The snippets to paste: the workflow's `allow-hosts:` block and the policy file's list. */
export function renderSuggestion(s: HostSuggestion): string {
  const lines: string[] = []
  if (s.entries.length === 0)
    lines.push('# No host was used or refused by name: allow-hosts can stay empty.')
  else {
    const width = Math.max(...s.entries.map((e) => e.entry.length))
    const note = (e: HostCount): string => {
      const parts = [`${e.requests} request(s)`]
      if (e.denied > 0) parts.push(e.denied === e.requests ? 'denied' : `${e.denied} denied`)
      if (e.hosts) parts.push(e.hosts.map((h) => `${h.host} ${h.requests}`).join(', '))
      return parts.join('; ')
    }
    lines.push('# In the workflow (with network: allowlist):', 'allow-hosts: |')
    for (const e of s.entries) lines.push(`  ${e.entry.padEnd(width)}  # ${note(e)}`)
    lines.push('', '# Or in .github/airlock.yml:', 'allow-hosts:')
    for (const e of s.entries) lines.push(`  - ${e.entry.padEnd(width)}  # ${note(e)}`)
  }
  for (const r of s.routes) {
    lines.push(
      '',
      `# credentials route ${r.route}: ${r.requests} request(s); scope it to what it served:`,
      `#   …|allow=${r.scopes.map((x) => x.scope).join(', ')}`
    )
    for (const x of r.scopes) lines.push(`#     ${x.scope}: ${x.requests}`)
  }
  if (s.skipped > 0)
    lines.push('', `# ${s.skipped} line(s) were not well-formed records and were skipped.`)
  return lines.join('\n') + '\n'
}
