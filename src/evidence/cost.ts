// What the run cost: CPU and memory over its phases, and model tokens with their source.
import type { Usage } from './metadata.js'

export interface TokenUsage {
  model: string | null
  input: number | null
  output: number | null
  cacheRead: number | null
  cacheWrite: number | null
}

/** CPU seconds summed and peak memory over the phases that ran (null when none was measured). */
export function phaseTotals(
  phases: { cpuSeconds: number | null; peakMemoryBytes: number | null }[]
): { cpuSeconds: number | null; peakMemoryBytes: number | null } {
  const cpu = phases.map((p) => p.cpuSeconds).filter((c): c is number => c !== null)
  const mem = phases.map((p) => p.peakMemoryBytes).filter((m): m is number => m !== null)
  return {
    cpuSeconds: cpu.length > 0 ? cpu.reduce((a, b) => a + b, 0) : null,
    peakMemoryBytes: mem.length > 0 ? Math.max(...mem) : null
  }
}

/**
 * The run's model tokens. The proxy's count (allowlist credential routes) is measured: it wins
 * over what the agent claims in usage.json.
 */
export function tokenUsage(
  measured: { models: string[]; tokens: { input: number | null; output: number | null } } | null,
  claimed: Usage | null
): TokenUsage | null {
  if (measured)
    return {
      model: measured.models.length > 0 ? measured.models.join(', ') : null,
      input: measured.tokens.input,
      output: measured.tokens.output,
      cacheRead: null,
      cacheWrite: null
    }
  if (claimed)
    return {
      model: claimed.model ?? null,
      input: claimed.inputTokens ?? null,
      output: claimed.outputTokens ?? null,
      cacheRead: claimed.cacheReadTokens ?? null,
      cacheWrite: claimed.cacheWriteTokens ?? null
    }
  return null
}
