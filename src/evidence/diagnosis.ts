// Why the tests failed, when the evidence names a cause other than the change: the same failure
// on the unchanged tree (the test command is likely wrong), the network the test phases do not
// have, or an install that failed before the tests could run. Pure.
import type { TestCase } from './test-reports/index.js'

export type TestsCause = 'same-as-base' | 'no-network' | 'install-failed'

export interface TestsDiagnosis {
  cause: TestsCause
  /** One sentence for the review (plain text, built from the run's own facts). */
  detail: string
}

interface RunFacts {
  exitCode: number | null
  cases: TestCase[]
}

function failedIds(cases: TestCase[]): string[] {
  return cases
    .filter((c) => c.status === 'failed')
    .map((c) => c.id)
    .sort()
}

/**
 * The unchanged tree and the agent's tree fail the same way: the same failing test ids (at least
 * one), or both exit non-zero without any test case. Then the command, not the change, fails.
 */
export function failsLikeBase(base: RunFacts, head: RunFacts): boolean {
  if (base.exitCode === 0 || head.exitCode === 0) return false
  const b = failedIds(base.cases)
  const h = failedIds(head.cases)
  if (b.length === 0 && h.length === 0)
    return (
      base.cases.length === 0 &&
      head.cases.length === 0 &&
      base.exitCode !== null &&
      head.exitCode !== null
    )
  return b.length === h.length && b.every((id, i) => id === h[i])
}

/** What resolvers, sockets and package managers print when there is no network. */
const NETWORK_ERRORS =
  /\b(getaddrinfo\s+(?:EAI_AGAIN|ENOTFOUND)|EAI_AGAIN|ENOTFOUND|ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|ENOTCACHED|network is unreachable|Temporary failure in name resolution|Name or service not known|Could not resolve host|Failed to establish a new connection|nodename nor servname provided)\b/i

/** The first network error in a phase's log (its text is hostile: only the matched words return). */
export function networkError(log: string): string | null {
  const m = NETWORK_ERRORS.exec(log)
  return m ? m[1] : null
}

export function sameAsBaseDiagnosis(): TestsDiagnosis {
  return {
    cause: 'same-as-base',
    detail:
      'The tests fail the same way on the unchanged base tree: the test command is likely wrong ' +
      '(or the base is broken), not the change; the re-run was skipped.'
  }
}

export function noNetworkDiagnosis(phase: string, matched: string): TestsDiagnosis {
  return {
    cause: 'no-network',
    detail:
      `The ${phase} log shows a network error (${matched}): the test phases have no network. ` +
      'Fetch what the tests need in the install phase (setup-command with setup-allow-hosts, ' +
      'docs/setup.md), or run what they talk to as services (docs/services.md).'
  }
}

export function installFailedDiagnosis(why: string): TestsDiagnosis {
  return {
    cause: 'install-failed',
    detail: `The tests did not run: the install phase (setup-command) failed first (${why}).`
  }
}
