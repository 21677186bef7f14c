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
    /** Test cases the report files held; null when no test-reports are configured. */
    reported?: number | null
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
          detail: `FROM ${b.written ?? b.ref} (line ${b.line})${b.unset ? `: build arg ${b.unset.join(', ')} has no value` : ''}`
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
    return is('tests-failed', testsFailedReason(tests))
  return is(
    'success',
    tests.flaky !== null
      ? `the agent finished and the tests pass on the re-run (flaky: ${tests.flaky})`
      : 'the agent finished and the tests pass'
  )
}

/**
 * Why the tests failed, in the words of both witnesses: the exit code and the report files. When
 * they disagree the review says so, and which one decided: a non-zero exit fails the run whatever
 * the report shows (a failure outside the tests — a hook, collection, a crash of the runner or of
 * its reporter — is not in the report), and a failing test in the report fails it whatever the exit.
 */
export function testsFailedReason(tests: NonNullable<PhaseOutcomes['tests']>): string {
  const exit = `exit ${tests.exitCode}`
  if (tests.failed > 0 && tests.exitCode === 0)
    return `the tests failed: the report files show ${tests.failed} failing test(s) although the test command exited 0; they disagree, and a failing test decides`
  if (tests.failed > 0) return `the tests failed (${exit}, ${tests.failed} failed)`
  if (tests.reported === null || tests.reported === undefined)
    return `the tests failed (${exit}; no test-reports configured, so no failing test is named)`
  if (tests.reported === 0)
    return `the tests failed (${exit}); the report files hold no test case (not written, not read, or empty: see Tests)`
  return `the tests failed (${exit}), but the report files show no failing test among ${tests.reported}: the report and the exit code disagree, and the exit code decides (a failure outside the tests, such as a hook, collection or a crash of the runner or its reporter, is not in the report: see logs/tests.log)`
}
