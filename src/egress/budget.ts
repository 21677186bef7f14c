// The model budget of a run, enforced at the proxy: requests through credential routes and the
// tokens the upstream reported in its answers (parsed from the recorded exchange). Past either
// limit every further model request is answered 429 with the reason; what the agent did so far
// is kept.

export interface BudgetLimits {
  /** `max-model-requests`: credential-route requests the run may send. */
  maxRequests?: number
  /** `max-model-tokens`: input + output tokens (as the upstream reported them). */
  maxTokens?: number
}

export interface BudgetState {
  requests: number
  tokens: number
  /** Which limit stopped a request first (null: none did). */
  hit: 'max-model-requests' | 'max-model-tokens' | null
  denied: number
}

export class Budget {
  readonly state: BudgetState = { requests: 0, tokens: 0, hit: null, denied: 0 }
  constructor(private readonly limits: BudgetLimits) {}

  /** Undefined when the request may go; else the reason it may not (and it is counted as denied). */
  admit(): string | undefined {
    const { maxRequests, maxTokens } = this.limits
    let reason: string | undefined
    if (maxRequests !== undefined && this.state.requests >= maxRequests) {
      this.state.hit ??= 'max-model-requests'
      reason = `max-model-requests (${maxRequests}) reached: ${this.state.requests} model request(s) sent`
    } else if (maxTokens !== undefined && this.state.tokens >= maxTokens) {
      this.state.hit ??= 'max-model-tokens'
      reason = `max-model-tokens (${maxTokens}) reached: ${this.state.tokens} token(s) used`
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
}
