import { codeBlock } from './escape.js'
import type { Report } from './report.js'
import { isIpLiteral, splitHostPort } from '../egress/host-rules.js'
import { isTelemetryHost } from '../egress/telemetry.js'

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
