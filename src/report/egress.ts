import { codeBlock } from './escape.js'
import type { Report } from './report.js'
import { isIpLiteral, splitHostPort } from '../egress/policy.js'

/**
 * The egress section of the comment: denied hosts (as an allow-hosts suggestion) and the model use.
 * Hosts and model names come from the agent: only name characters reach the comment.
 */
export function renderEgress(report: Report): string {
  const e = report.egress
  const parts: string[] = []
  const names = e.deniedHosts.filter((h) => !isIpLiteral(splitHostPort(h)?.host ?? h))
  if (e.deniedHosts.length > 0) {
    parts.push(
      `**Denied egress** (${e.denied} attempt(s)): ${e.deniedHosts.map((h) => `\`${h}\``).join(', ')}` +
        (names.length > 0
          ? `\n\nIf the agent needs them, allow them in the workflow:\n\n` +
            codeBlock(
              `allow-hosts: |\n${[...new Set(names.map((h) => h.replace(/:(443|80)$/, '')))].map((h) => `  ${h}`).join('\n')}`,
              'yaml'
            )
          : '')
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
    const limit = b.hit === 'max-model-requests' ? b.maxRequests : b.maxTokens
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
