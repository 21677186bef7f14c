// The end of every run, whatever happened: the outcome classified, the totals, the secret scan of
// the outputs, report.json and comment.md, provenance.json over all of it, and the cleanup
// (containers, then the scratch filesystem, then the temporary folder).
import * as fs from 'node:fs'
import { errorMessage } from '../errors.js'
import type { Redactor } from '../redact.js'
import { scanOutputs } from '../evidence/secrets.js'
import type { Logger } from '../log.js'
import type { RunPlan } from '../plan.js'
import { OUTPUT_FILES, writeOutputs } from '../report/output.js'
import { writeProvenance } from '../report/provenance.js'
import type { Report } from '../report/report.js'
import type { Runtime } from '../sandbox/types.js'
import type { Scratch } from '../workspace/bounded.js'
import { assembleReport } from './assemble.js'
import type { RunRecords } from './assemble.js'

/**
 * Ends the run: report.json assembled from the records (once more after the secret scan, which
 * reads the report and is timed into it), written with comment.md and provenance.json, and the
 * cleanup alongside. Returns the report written.
 */
export async function finishRun(
  plan: RunPlan,
  records: RunRecords,
  caught: unknown,
  tmp: string,
  deps: { runtime: Runtime; log: Logger; redactor: Redactor }
): Promise<Report> {
  const { log, redactor } = deps
  const out = plan.outputDir
  const end = { ...(caught !== undefined ? { error: caught } : {}), finishedAt: Date.now() }
  const scanStart = Date.now()
  const draft = assembleReport(plan, records, end)
  await scanOutputs(out, [JSON.stringify(draft)], scannedFiles(draft), redactor).catch(
    (e: unknown) => log.error(`secret scan of the outputs: ${errorMessage(e)}`)
  )
  const steps = { ...records.steps, scanMs: Date.now() - scanStart }
  const report = assembleReport(plan, { ...records, steps }, end)
  await writeOutputs(out, report, redactor).catch((e: unknown) =>
    log.error(`could not write the report: ${errorMessage(e)}`)
  )
  await Promise.all([
    // Last of the evidence: binds every file written above.
    writeProvenance(out).catch((e: unknown) =>
      log.error(`could not write ${OUTPUT_FILES.provenance}: ${errorMessage(e)}`)
    ),
    // Alongside it (the engine's objects and the run's folders are no evidence).
    cleanup(plan, tmp, { ...deps, ...(records.scratch ? { scratch: records.scratch } : {}) })
  ])
  return report
}

/** The run's containers, then its scratch filesystem, then its temporary folder. */
async function cleanup(
  plan: RunPlan,
  tmp: string,
  deps: { runtime: Runtime; log: Logger; scratch?: Scratch }
): Promise<void> {
  const { runtime, log } = deps
  await runtime.cleanup(plan.runId).catch((e: unknown) => log.warn(`cleanup: ${errorMessage(e)}`))
  // After the containers are gone: nothing holds the scratch filesystem any more.
  const unmounted = await deps.scratch?.release()
  if (unmounted !== undefined) log.warn(unmounted)
  await fs.promises.rm(tmp, { recursive: true, force: true }).catch(() => undefined)
}

/** The text files of the output folder that the secret scan reads and masks. */
function scannedFiles(report: Report): string[] {
  const o = OUTPUT_FILES
  // The kept test report files too (written by the tests, which can print a token).
  const kept = report.tests.sources.flatMap((s) => (s.kept ? [s.kept.path] : []))
  return [
    o.agentLog,
    o.testsLog,
    o.rerunLog,
    o.baselineLog,
    o.task,
    o.egress,
    o.transcript,
    ...kept
  ]
}
