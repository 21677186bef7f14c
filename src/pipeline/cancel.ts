// Cancellation of a run: on the signal the report (`cancelled`) and the evidence so far are
// written at once, before the containers are stopped (the runner kills the step 10 s after its
// first signal); the stages check in between and stop with a CancelledError.
import { CancelledError, errorMessage } from '../errors.js'
import type { Redactor } from '../redact.js'
import type { Logger } from '../log.js'
import { writeOutputs } from '../report/output.js'
import { writeProvenance } from '../report/provenance.js'
import type { Report } from '../report/report.js'
import type { RunEnd } from './assemble.js'

export interface CancelWatch {
  /** Throws a CancelledError when the run was cancelled. */
  check(): void
  /** Stops watching; resolves when the early report (if any) is written. */
  settle(): Promise<void>
}

export function watchCancellation(
  signal: AbortSignal | undefined,
  /** The report of the run so far, as it would end with the error given. */
  reportSoFar: (end: RunEnd) => Report,
  out: string,
  redactor: Redactor,
  log: Logger
): CancelWatch {
  let early: Promise<void> | undefined
  const onAbort = (): void => {
    const error = new CancelledError(String(signal?.reason ?? 'signal'))
    const snapshot = reportSoFar({ error, finishedAt: Date.now() })
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
