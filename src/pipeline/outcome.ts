// The run's outcome from what the phases did, the policy violations and the error that ended the
// run early (if any). Pure: every outcome and error class has a row in its table test.
import { CancelledError, ConfigurationError, errorMessage } from '../errors.js'
import type { PolicyFinding } from '../evidence/path-policy.js'
import type { Outcome } from '../report/report.js'
import { UnpinnedBaseError } from '../sandbox/dockerfile.js'
import { UnsafePathError } from '../git-path.js'

export interface PhaseOutcome {
  exitCode: number | null
  timedOut: boolean
  oomKilled: boolean
  cancelled: boolean
  error?: string
}

export interface PhaseOutcomes {
  /** Absent: the agent never ran (the run ended before it). */
  agent?: PhaseOutcome & { timeoutMs: number; memoryBytes: number }
  /** Absent: no test-command, or the tests did not run. */
  tests?: PhaseOutcome & {
    /** Failed test cases after the re-run. */
    failed: number
    /** The re-run (if any) exited 0 with no failed case left. */
    rerunPassed: boolean
    /** Tests found flaky by the re-run; null when there was no re-run. */
    flaky: number | null
  }
  testsConfigured: boolean
}

export interface Classified {
  outcome: Outcome
  reason: string
  /** Violations the error itself stands for (unpinned base images). */
  violations: PolicyFinding[]
}

export function classifyOutcome(
  phases: PhaseOutcomes,
  violations: readonly PolicyFinding[],
  error?: unknown
): Classified {
  const is = (outcome: Outcome, reason: string, extra: PolicyFinding[] = []): Classified => ({
    outcome,
    reason,
    violations: extra
  })
  if (error !== undefined) {
    // A configuration error that also stands for one finding per FROM line.
    if (error instanceof UnpinnedBaseError)
      return is(
        'configuration-error',
        `configuration: ${error.message}`,
        error.bases.map((b) => ({
          rule: 'unpinned-base',
          path: null,
          detail: `FROM ${b.ref} (line ${b.line})`
        }))
      )
    if (error instanceof UnsafePathError)
      return is(
        'policy-violation',
        error.message,
        error.paths.map((p) => ({ rule: 'unsafe-path', path: p.path, detail: p.problem }))
      )
    if (error instanceof CancelledError) return is('cancelled', error.message)
    if (error instanceof ConfigurationError)
      return is('configuration-error', `configuration: ${error.message}`)
    return is('infrastructure-error', errorMessage(error))
  }
  const result = phaseOutcome(phases)
  // A phase that filled workspace-size failed because of the limit (ENOSPC): the violation is
  // the outcome, whatever exit code followed.
  const full = violations.some((v) => v.rule === 'workspace-size')
  if (
    violations.length > 0 &&
    (result.outcome === 'success' ||
      result.outcome === 'tests-failed' ||
      (full && result.outcome === 'agent-failed'))
  ) {
    const rules = [...new Set(violations.map((v) => v.rule))].join(', ')
    return is(
      'policy-violation',
      `${violations.length} policy violation(s): ${rules} (was: ${result.outcome})`
    )
  }
  return result
}

function phaseOutcome(phases: PhaseOutcomes): Classified {
  const is = (outcome: Outcome, reason: string): Classified => ({ outcome, reason, violations: [] })
  const { agent, tests } = phases
  if (!agent) return is('infrastructure-error', 'the run did not finish')
  if (agent.cancelled || tests?.cancelled) return is('cancelled', 'run cancelled by signal')
  if (agent.error !== undefined)
    return is('infrastructure-error', `the agent container failed: ${agent.error}`)
  if (agent.timedOut)
    return is('timed-out', `the agent ran past timeout-minutes (${agent.timeoutMs / 60000} min)`)
  if (agent.oomKilled)
    return is(
      'agent-failed',
      `the agent was killed for using more than memory (${agent.memoryBytes} bytes)`
    )
  if (agent.exitCode !== 0)
    return is('agent-failed', `the agent exited with code ${agent.exitCode}`)
  if (!phases.testsConfigured)
    return is('success', 'the agent finished (no test-command configured)')
  if (!tests) return is('infrastructure-error', 'the tests did not run')
  if (tests.error !== undefined)
    return is('infrastructure-error', `the tests container failed: ${tests.error}`)
  if (tests.timedOut) return is('timed-out', 'the tests ran past timeout-minutes')
  if ((tests.exitCode !== 0 && !tests.rerunPassed) || tests.failed > 0)
    return is('tests-failed', `the tests failed (exit ${tests.exitCode}, ${tests.failed} failed)`)
  return is(
    'success',
    tests.flaky !== null
      ? `the agent finished and the tests pass on the re-run (flaky: ${tests.flaky})`
      : 'the agent finished and the tests pass'
  )
}
