import { estimateCost, priceOf } from '../../src/evidence/prices.js'

describe('the cost estimate', () => {
  test('longest prefix of the model name', () => {
    expect(priceOf('claude-sonnet-4-5-20250929')?.entry).toBe('claude-sonnet-4')
    expect(priceOf('gpt-5-mini-2025')?.entry).toBe('gpt-5-mini')
    expect(priceOf('gpt-5-codex')?.entry).toBe('gpt-5')
    expect(priceOf('claude-stub-model')).toBeUndefined()
  })
  test('tokens × list price', () => {
    expect(
      estimateCost({ models: ['claude-sonnet-4-5'], tokens: { input: 1_000_000, output: 100_000 } })
    ).toEqual({
      usd: 4.5,
      basis: [{ model: 'claude-sonnet-4-5', entry: 'claude-sonnet-4', input: 3, output: 15 }]
    })
  })
  test('an unknown model or no transcript: no estimate', () => {
    expect(estimateCost({ models: ['stub'], tokens: { input: 1, output: 1 } })).toBeNull()
    expect(estimateCost(null)).toBeNull()
  })
})
