// The model budget of a run, enforced at the proxy: requests through credential routes, the
// tokens the upstream reported in its answers (parsed from the recorded exchange), and what those
// tokens cost at the price table's rates (src/prices.ts). Past any limit every further model
// request is answered 429 with the reason; what the agent did so far is kept.
import { exchangeCost } from '../prices.js'

export interface BudgetLimits {
  /** `max-model-requests`: credential-route requests the run may send. */
  maxRequests?: number
  /** `max-model-tokens`: input + output tokens (as the upstream reported them). */
  maxTokens?: number
  /** `max-cost-usd`: US dollars the exchanges may cost, priced from their token usage. */
  maxCostUsd?: number
}

export type BudgetHit = 'max-model-requests' | 'max-model-tokens' | 'max-cost-usd'

export interface BudgetState {
  requests: number
  tokens: number
  /** US dollars the exchanges so far cost (price table; unknown models at the dearest rate). */
  costUsd: number
  /** Which limit stopped a request first (null: none did). */
  hit: BudgetHit | null
  denied: number
}

/** Dollars as the reason and the report write them: up to 6 decimals, no trailing zeros. */
export function formatUsd(usd: number): string {
  return `$${Number(usd.toFixed(6))}`
}

export class Budget {
  readonly state: BudgetState = { requests: 0, tokens: 0, costUsd: 0, hit: null, denied: 0 }
  constructor(private readonly limits: BudgetLimits) {}

  /** Undefined when the request may go; else the reason it may not (and it is counted as denied). */
  admit(): string | undefined {
    const { maxRequests, maxTokens, maxCostUsd } = this.limits
    let reason: string | undefined
    if (maxRequests !== undefined && this.state.requests >= maxRequests) {
      this.state.hit ??= 'max-model-requests'
      reason = `max-model-requests (${maxRequests}) reached: ${this.state.requests} model request(s) sent`
    } else if (maxTokens !== undefined && this.state.tokens >= maxTokens) {
      this.state.hit ??= 'max-model-tokens'
      reason = `max-model-tokens (${maxTokens}) reached: ${this.state.tokens} token(s) used`
    } else if (maxCostUsd !== undefined && this.state.costUsd >= maxCostUsd) {
      this.state.hit ??= 'max-cost-usd'
      reason = `max-cost-usd (${maxCostUsd}) reached: ${formatUsd(this.state.costUsd)} spent at list prices`
    }
    if (reason !== undefined) {
      this.state.denied++
      return reason
    }
    this.state.requests++
    return undefined
  }

  addTokens(n: number): void {
    if (Number.isFinite(n) && n > 0) this.state.tokens += n
  }

  /** One finished exchange: its tokens, and their cost at the model's rates. */
  addExchange(model: string | null, input: number, output: number): void {
    this.addTokens(input)
    this.addTokens(output)
    this.state.costUsd += exchangeCost(model, input, output)
  }
}
