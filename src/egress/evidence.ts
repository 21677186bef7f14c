// The proxy's records on the host: egress.jsonl (every attempt), transcript.jsonl (credential
// routes, with the reassembled reply), and the summary that goes into report.json. Every line is
// masked again with the run's secret values before it is written.
import * as fs from 'node:fs'
import * as path from 'node:path'
import type { EgressLedger } from './ledger.js'
import type { BudgetHit, BudgetLimits } from './budget.js'
import type { EgressEvent, TranscriptRecord } from './proxy.js'
import { parseExchange, summarizeTranscript } from './transcript.js'
import type { TranscriptSummary } from './transcript.js'

export const EGRESS_FILES = { egress: 'egress.jsonl', transcript: 'transcript.jsonl' } as const

export interface EgressSummary {
  allowed: number
  denied: number
  /** host:port of the denied attempts (distinct, sorted, at most 50): a suggestion for allow-hosts. */
  deniedHosts: string[]
  /** Credential routes: requests, models, tokens and request hashes; null when none ran. */
  transcript: TranscriptSummary | null
  /** Injected credential values the proxy masked in upstream answers (a reflecting upstream). */
  reflected?: number
  /** The model budget and whether the proxy refused requests past it. */
  budget?: BudgetSummary
  /**
   * The upstream hosts of the credential routes: reached only through the routes (which add the
   * key), so never a suggestion for allow-hosts.
   */
  credentialHosts?: string[]
  /** Allowed hosts used and never used, denied hosts with their fix (src/egress/ledger.ts). */
  ledger?: EgressLedger
}

export interface BudgetSummary {
  maxRequests: number | null
  maxTokens: number | null
  /** US dollars, priced from the exchanges' token usage with the price table (src/prices.ts). */
  maxCostUsd: number | null
  /** The limit that stopped requests (null: none was reached). */
  hit: BudgetHit | null
  /** Requests refused with 429 because of it. */
  denied: number
}

const MAX_DENIED_HOSTS = 50

export function summarizeEgress(
  events: EgressEvent[],
  transcript: TranscriptRecord[],
  overflow: { allowed: number; denied: number } = { allowed: 0, denied: 0 },
  budget: BudgetLimits = {}
): EgressSummary {
  const allowed = events.filter((e) => e.allowed).length + overflow.allowed
  const denied = new Set<string>()
  for (const e of events) {
    // The host came from the agent: only name/address characters are kept for the report.
    if (
      !e.allowed &&
      e.reason !== 'bad-request' &&
      e.reason !== 'budget-exceeded' &&
      /^[A-Za-z0-9.:[\]-]{1,255}$/.test(e.host)
    )
      denied.add(e.port > 0 ? `${e.host}:${e.port}` : e.host)
  }
  const overBudget = events.filter((e) => e.reason === 'budget-exceeded')
  const first = overBudget[0]?.detail ?? ''
  const reflected = events.reduce((n, e) => n + (e.reflected ?? 0), 0)
  return {
    allowed,
    denied: events.length + overflow.allowed + overflow.denied - allowed,
    deniedHosts: [...denied].sort().slice(0, MAX_DENIED_HOSTS),
    transcript: transcript.length > 0 ? summarizeTranscript(transcript) : null,
    ...(reflected > 0 ? { reflected } : {}),
    ...(budget.maxRequests !== undefined ||
    budget.maxTokens !== undefined ||
    budget.maxCostUsd !== undefined
      ? {
          budget: {
            maxRequests: budget.maxRequests ?? null,
            maxTokens: budget.maxTokens ?? null,
            maxCostUsd: budget.maxCostUsd ?? null,
            hit: overBudget.length === 0 ? null : hitOf(first),
            denied: overBudget.length
          }
        }
      : {})
  }
}

/** The limit a budget denial's reason names (the reason starts with the input's name). */
function hitOf(reason: string): BudgetHit {
  for (const hit of ['max-model-tokens', 'max-cost-usd'] as const)
    if (reason.startsWith(hit)) return hit
  return 'max-model-requests'
}

export function masker(secrets: string[]): (text: string) => string {
  const values = secrets.filter((s) => s.length > 0).sort((a, b) => b.length - a.length)
  return (text) => {
    let out = text
    for (const s of values) out = out.split(s).join('***')
    return out
  }
}

export async function writeEgressEvidence(
  outDir: string,
  events: EgressEvent[],
  transcript: TranscriptRecord[],
  secrets: string[]
): Promise<void> {
  const mask = masker(secrets)
  const lines = (items: unknown[]): string =>
    items.map((i) => mask(JSON.stringify(i)) + '\n').join('')
  await fs.promises.writeFile(path.join(outDir, EGRESS_FILES.egress), lines(events))
  if (transcript.length > 0) {
    const withReplies = transcript.map((r) => {
      const ex = parseExchange(r)
      return {
        ...r,
        parsed: {
          model: ex.model,
          inputTokens: ex.inputTokens,
          outputTokens: ex.outputTokens,
          streamed: ex.streamed,
          text: ex.text.slice(0, 256 * 1024),
          toolCalls: ex.toolCalls.slice(0, 200)
        }
      }
    })
    await fs.promises.writeFile(path.join(outDir, EGRESS_FILES.transcript), lines(withReplies))
  }
}
