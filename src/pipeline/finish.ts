// The end of every run, whatever happened: the outcome classified, the totals, the secret scan of
// the outputs, report.json and comment.md, provenance.json over all of it, and the cleanup
// (containers, then the scratch filesystem, then the temporary folder).
import * as fs from 'node:fs'
import { errorMessage } from '../errors.js'
import { phaseTotals } from '../evidence/cost.js'
import type { Redactor } from '../redact.js'
import { scanOutputs } from '../evidence/secrets.js'
import type { Logger } from '../log.js'
import type { RunPlan } from '../plan.js'
import { OUTPUT_FILES, writeOutputs } from '../report/output.js'
import { writeProvenance } from '../report/provenance.js'
import type { PhaseReport, Report } from '../report/report.js'
import type { Runtime } from '../sandbox/types.js'
import type { Scratch } from '../workspace/bounded.js'
import { classifyOutcome } from './outcome.js'
import type { PhaseOutcomes } from './outcome.js'

export async function finishRun(
  plan: RunPlan,
  report: Report,
  phases: PhaseOutcomes,
  caught: unknown,
  tmp: string,
  deps: { runtime: Runtime; log: Logger; redactor: Redactor; scratch?: Scratch }
): Promise<void> {
  const { log, redactor } = deps
  const out = plan.outputDir
  const classified = classifyOutcome(phases, report.policy.violations, caught)
  report.outcome = classified.outcome
  report.outcomeReason = classified.reason
  report.policy.violations.push(...classified.violations)
  report.finishedAt = new Date().toISOString()
  report.cost.wallMs = Date.now() - Date.parse(report.startedAt)
  Object.assign(report.cost, phaseTotals(phasesRun(report)))
  const scanStart = Date.now()
  await scanOutputs(out, [JSON.stringify(report)], scannedFiles(report), redactor).catch(
    (e: unknown) => log.error(`secret scan of the outputs: ${errorMessage(e)}`)
  )
  report.cost.steps = { ...report.cost.steps, scanMs: Date.now() - scanStart }
  await writeOutputs(out, report, redactor).catch((e: unknown) =>
    log.error(`could not write the report: ${errorMessage(e)}`)
  )
  await Promise.all([
    // Last of the evidence: binds every file written above.
    writeProvenance(out).catch((e: unknown) =>
      log.error(`could not write ${OUTPUT_FILES.provenance}: ${errorMessage(e)}`)
    ),
    // Alongside it (the engine's objects and the run's folders are no evidence).
    cleanup(plan, tmp, deps)
  ])
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

function phasesRun(report: Report): PhaseReport[] {
  return [
    report.setup?.phase ?? null,
    report.tests.baseline?.phase ?? null,
    report.agent,
    report.tests.phase,
    report.tests.rerun?.phase ?? null
  ].filter((p): p is PhaseReport => p !== null)
}
