import { codeBlock } from './escape.js'
import type { Report } from './report.js'
import { isIpLiteral, splitHostPort } from '../egress/host-rules.js'
import { isTelemetryHost } from '../egress/telemetry.js'
import { ledgerFix } from '../egress/ledger.js'
import type { EgressLedger } from '../egress/ledger.js'
import { DENY_REASONS } from '../egress/host-rules.js'

/** Only host-name characters (and `*.` / `:port`) of a stored host reach the comment. */
const hostText = (h: unknown): string =>
  `\`${
    String(h)
      .replace(/[^A-Za-z0-9.:*[\]-]/g, '')
      .slice(0, 262) || '?'
  }\``
const count = (n: unknown): number =>
  Number.isSafeInteger(n) && (n as number) >= 0 ? (n as number) : 0

function bytes(n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`
  return `${(n / 1024 / 1024).toFixed(1)} MiB`
}

/**
 * The ledger, collapsed: allowed hosts used (requests, bytes), allowed entries never used
 * (candidates to drop), denied hosts with the one-line fix. Fixes are recomputed from the reason
 * and the host, never taken from the stored text.
 */
export function renderLedger(
  ledger: EgressLedger,
  routeHosts: Set<string>,
  isTelemetry: (h: string) => boolean
): string {
  const used = ledger.used ?? []
  const unused = ledger.unused ?? []
  const denied = (ledger.denied ?? []).filter((d) =>
    (DENY_REASONS as readonly string[]).includes(d.reason)
  )
  const lines: string[] = []
  if (used.length > 0) {
    lines.push('| allowed host used | requests | bytes |', '| --- | ---: | ---: |')
    for (const u of used) {
      const route =
        typeof u.route === 'string' && /^[A-Z0-9_]{1,64}$/.test(u.route)
          ? ` (route ${u.route})`
          : ''
      lines.push(
        `| ${hostText(u.host)}${route} | ${count(u.requests)} | ${bytes(count(u.bytes))} |`
      )
    }
  } else lines.push('No allowed host was used.')
  if (unused.length > 0)
    lines.push(
      '',
      `**Allowed, never used** (candidates to drop): ${unused.map(hostText).join(', ')}`
    )
  if (denied.length > 0) {
    lines.push('', '**Denied:**')
    for (const d of denied) {
      const host = String(d.host).replace(/[^A-Za-z0-9.:[\]-]/g, '')
      const name = (host.split(':')[0] ?? '').toLowerCase()
      const method =
        typeof d.method === 'string' && /^[A-Z]{1,16}$/.test(d.method) ? d.method : undefined
      lines.push(
        `- ${hostText(host)} × ${count(d.attempts)} (${d.reason}): ${ledgerFix({ host, reason: d.reason, ...(method ? { method } : {}) }, routeHosts.has(name), isTelemetry(name))}`
      )
    }
  }
  const summary = `Egress ledger: ${used.length} host(s) used · ${unused.length} allowed but unused · ${denied.length} denied`
  return `<details><summary>${summary}</summary>\n\n${lines.join('\n')}\n\n</details>`
}

/**
 * The egress section of the comment: denied hosts (as an allow-hosts suggestion) and the model use.
 * Hosts and model names come from the agent: only name characters reach the comment.
 */
export function renderEgress(report: Report): string {
  const e = report.egress
  const parts: string[] = []
  const hostOf = (h: string): string => splitHostPort(h)?.host ?? h
  const names = e.deniedHosts.filter((h) => !isIpLiteral(hostOf(h)))
  // Never suggested: a credential route's upstream (reached through the route, which adds the
  // key; allowing the host would let the agent call it without the proxy's key handling) and the
  // CLI's own telemetry.
  const routeHosts = new Set((e.credentialHosts ?? []).map((h) => h.toLowerCase()))
  const isRoute = (h: string): boolean => routeHosts.has(hostOf(h).toLowerCase())
  const isTelemetry = (h: string): boolean => isTelemetryHost(report.agent?.preset, hostOf(h))
  const advised = names.filter((h) => !isRoute(h) && !isTelemetry(h))
  const route = names.filter(isRoute)
  const telemetry = names.filter((h) => !isRoute(h) && isTelemetry(h))
  if (e.deniedHosts.length > 0) {
    const notes: string[] = []
    if (route.length > 0)
      notes.push(
        `Not to allow: ${route.map((h) => `\`${h}\``).join(', ')} — the model API, reached only through its credential route (the agent reads the route's base URL from its environment).`
      )
    if (telemetry.length > 0)
      notes.push(
        `Not to allow: ${telemetry.map((h) => `\`${h}\``).join(', ')} — telemetry or update checks of the agent's CLI, which it does not need.`
      )
    parts.push(
      `**Denied egress** (${e.denied} attempt(s)): ${e.deniedHosts.map((h) => `\`${h}\``).join(', ')}` +
        (advised.length > 0
          ? `\n\nIf the agent needs them, allow them in the workflow:\n\n` +
            codeBlock(
              `allow-hosts: |\n${[...new Set(advised.map((h) => h.replace(/:(443|80)$/, '')))].map((h) => `  ${h}`).join('\n')}`,
              'yaml'
            )
          : '') +
        (notes.length > 0 ? `\n\n${notes.join('\n\n')}` : '')
    )
  }
  if (e.ledger)
    parts.push(renderLedger(e.ledger, routeHosts, (h) => isTelemetryHost(report.agent?.preset, h)))
  const t = e.transcript
  if (t) {
    parts.push(
      `**Model:** ${t.models.length > 0 ? t.models.map((m) => `\`${m.replace(/[^A-Za-z0-9._:/-]/g, '') || '?'}\``).join(', ') : 'unknown'} · ` +
        `${t.requests} request(s) · ${t.tokens.input} input / ${t.tokens.output} output tokens (transcript.jsonl in the artifact)`
    )
  }
  const b = e.budget
  if (b?.hit) {
    const limit =
      b.hit === 'max-model-requests'
        ? b.maxRequests
        : b.hit === 'max-model-tokens'
          ? b.maxTokens
          : b.maxCostUsd
    parts.push(
      `⛔ **Model budget reached:** \`${b.hit}: ${limit}\`; the proxy refused ${b.denied} further model request(s) (429). The work done until then is kept and shown here.`
    )
  }
  if ((e.reflected ?? 0) > 0) {
    parts.push(
      `🔑 **An upstream echoed the injected credential** ${e.reflected} time(s); the proxy masked it before the agent saw it (egress.jsonl: \`reflected\`).`
    )
  }
  return parts.join('\n\n')
}
