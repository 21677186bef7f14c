// A well-formed report.json as an untrusted artifact would carry it, with overrides.
export const HEAD = 'a'.repeat(40)
export const DIFF = 'b'.repeat(64)

export function report(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schemaVersion: 1,
    runId: '12-1',
    outcome: 'success',
    outcomeReason: 'ok',
    startedAt: 'x',
    finishedAt: 'y',
    repo: { headSha: HEAD, baseSha: HEAD },
    image: { id: 'sha256:' + 'c'.repeat(64), ref: null },
    diff: { sha256: DIFF, files: [] },
    policy: { violations: [] },
    ...overrides
  }
}
