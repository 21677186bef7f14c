// Hosts the agent CLIs contact for telemetry, error reports and update checks. The presets switch
// what they can off (images/agents/*); what is left is denied by the allowlist, and the review
// never suggests allowing it.

/** Per preset: host names (a leading `*.` matches any subdomain). */
export const TELEMETRY_HOSTS: Readonly<Record<string, readonly string[]>> = {
  'claude-code': [
    'statsig.anthropic.com',
    '*.statsig.com',
    'sentry.io',
    '*.sentry.io',
    '*.datadoghq.com'
  ],
  codex: ['api.github.com', 'chatgpt.com', '*.chatgpt.com', 'sentry.io', '*.sentry.io'],
  'gemini-cli': ['play.googleapis.com', '*.clearcut.googleapis.com']
}

/** Whether `host` is a known telemetry host of `preset`'s CLI. */
export function isTelemetryHost(preset: string | undefined, host: string): boolean {
  if (preset === undefined) return false
  const h = host.toLowerCase()
  return (TELEMETRY_HOSTS[preset] ?? []).some((rule) =>
    rule.startsWith('*.') ? h.endsWith(rule.slice(1)) : h === rule
  )
}
