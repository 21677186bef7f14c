// The result of a phase before it runs, the same for every backend (no engine client here).
import type { PhaseResult } from './types.js'

/** A phase's result when it starts: no exit code yet, nothing timed out or cancelled, no time spent. */
export function startingPhaseResult(): PhaseResult {
  return {
    exitCode: null,
    timedOut: false,
    oomKilled: false,
    cancelled: false,
    durationMs: 0
  }
}
