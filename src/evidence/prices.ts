// An estimate of what the model use cost: the tokens the proxy counted in the transcript times a
// price table per model (docs/cost.md). An estimate, labelled as one: cache discounts, batch
// prices and long-context tiers are not modelled, and list prices change.

/** US dollars per million tokens. */
export interface Price {
  input: number
  output: number
}

/**
 * List prices per million tokens (the vendors' published API prices, standard tier), matched by
 * the longest prefix of the model name the API reported. To change one, edit this table and
 * docs/cost.md.
 */
export const PRICES: Readonly<Record<string, Price>> = {
  'claude-opus-4-5': { input: 5, output: 25 },
  'claude-opus-4-1': { input: 15, output: 75 },
  'claude-opus-4': { input: 15, output: 75 },
  'claude-sonnet-4': { input: 3, output: 15 },
  'claude-3-7-sonnet': { input: 3, output: 15 },
  'claude-haiku-4-5': { input: 1, output: 5 },
  'claude-3-5-haiku': { input: 0.8, output: 4 },
  'gpt-5-mini': { input: 0.25, output: 2 },
  'gpt-5-nano': { input: 0.05, output: 0.4 },
  'gpt-5': { input: 1.25, output: 10 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1': { input: 2, output: 8 },
  'gemini-2.5-pro': { input: 1.25, output: 10 },
  'gemini-2.5-flash-lite': { input: 0.1, output: 0.4 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5 }
}

export interface CostEstimate {
  usd: number
  /** The price-table entry used for each model. */
  basis: { model: string; entry: string; input: number; output: number }[]
}

/** The table entry for a model name (longest matching prefix), or undefined. */
export function priceOf(model: string): { entry: string; price: Price } | undefined {
  const name = model.toLowerCase().replace(/^models\//, '')
  let best: string | undefined
  for (const key of Object.keys(PRICES))
    if (name.startsWith(key) && (best === undefined || key.length > best.length)) best = key
  return best === undefined ? undefined : { entry: best, price: PRICES[best] }
}

/**
 * The estimate for the measured tokens; null when there are none, or when a model is not in the
 * table (a run with several models prices them all at the dearest one's rate, which says so).
 */
export function estimateCost(
  measured: { models: string[]; tokens: { input: number; output: number } } | null
): CostEstimate | null {
  if (measured === null || measured.models.length === 0) return null
  const basis: CostEstimate['basis'] = []
  for (const model of measured.models) {
    const p = priceOf(model)
    if (p === undefined) return null
    basis.push({ model, entry: p.entry, ...p.price })
  }
  const input = Math.max(...basis.map((b) => b.input))
  const output = Math.max(...basis.map((b) => b.output))
  const usd = (measured.tokens.input * input + measured.tokens.output * output) / 1_000_000
  return { usd: Math.round(usd * 1e6) / 1e6, basis }
}
