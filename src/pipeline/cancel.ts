// Cancellation of a run: on the signal the report (`cancelled`) and the evidence so far are
// written at once, before the containers are stopped (the runner kills the step 10 s after its
// first signal); the stages check in between and stop with a CancelledError.
import { CancelledError, errorMessage } from '../errors.js'
import type { Redactor } from '../redact.js'
import type { Logger } from '../log.js'
import { writeOutputs } from '../report/output.js'
import { writeProvenance } from '../report/provenance.js'
import type { Report } from '../report/report.js'

export interface CancelWatch {
  /** Throws a CancelledError when the run was cancelled. */
  check(): void
  /** Stops watching; resolves when the early report (if any) is written. */
  settle(): Promise<void>
}

export function watchCancellation(
  signal: AbortSignal | undefined,
  report: Report,
  out: string,
  redactor: Redactor,
  log: Logger
): CancelWatch {
  let early: Promise<void> | undefined
  const onAbort = (): void => {
    const snapshot = structuredClone(report)
    snapshot.outcome = 'cancelled'
    snapshot.outcomeReason = `run cancelled by ${String(signal?.reason ?? 'signal')}`
    snapshot.finishedAt = new Date().toISOString()
    snapshot.cost.wallMs = Date.now() - Date.parse(report.startedAt)
    early = writeOutputs(out, snapshot, redactor)
      .then(() => writeProvenance(out))
      .then(() => log.info('cancelled: report.json written; stopping the sandbox'))
      .catch((e: unknown) => log.error(`could not write the report: ${errorMessage(e)}`))
  }
  if (signal?.aborted) onAbort()
  else signal?.addEventListener('abort', onAbort, { once: true })
  return {
    check: () => {
      if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'signal'))
    },
    settle: async () => {
      signal?.removeEventListener('abort', onAbort)
      await early
    }
  }
}
