// The tests stage: the test command on exactly what would be applied — a fresh checkout of the
// diff's result tree plus what the install phase left outside the tree — one re-run of failures
// on another such copy (tests that pass then are flaky), and the comparison with the baseline.
// Whatever the agent left in its own workspace outside the diff is in neither.
import * as fs from 'node:fs'
import * as path from 'node:path'
import { compareTests, markFlaky, shouldRerun } from '../evidence/compare.js'
import {
  failsLikeBase,
  networkError,
  noNetworkDiagnosis,
  sameAsBaseDiagnosis
} from '../evidence/diagnosis.js'
import type { TestsDiagnosis } from '../evidence/diagnosis.js'
import { collectTestReports, summarize } from '../evidence/test-reports/index.js'
import type { PhasePlan } from '../plan.js'
import { OUTPUT_FILES } from '../report/output.js'
import type { Report } from '../report/report.js'
import type { Workspace } from '../workspace/workspace.js'
import { carryEntries, copyWorkspace } from '../workspace/carry.js'
import type { ServiceReport } from '../services/services.js'
import type { PhaseOutcomes } from './outcome.js'
import { ownForSandbox, runPhase, sandboxFolder, servicesOf } from './phase.js'
import type { PhaseContext, PhaseRun } from './phase.js'
import { CancelledError, InfrastructureError, errorMessage } from '../errors.js'

/** What the tests stage returns: the report's tests record and the outcome of the phase. */
export interface TestsRecord {
  tests: Pick<Report['tests'], 'phase' | 'cases' | 'summary' | 'sources'> &
    Partial<Pick<Report['tests'], 'rerun' | 'comparison' | 'workspace' | 'diagnosis'>>
  outcome: NonNullable<PhaseOutcomes['tests']>
}

/**
 * What the tests stage returns: what ran (absent when the tests phase never started), the
 * service containers of its phases, and why nothing after it may run (a cancellation, services
 * that did not start), if so.
 */
export interface TestsStageRecord {
  ran?: TestsRecord
  services: ServiceReport[]
  stop?: Error
}

/** What the baseline stage returns, in the same terms. */
export interface BaselineRecord {
  baseline?: NonNullable<Report['tests']['baseline']>
  services: ServiceReport[]
  stop?: Error
}

/** The install phase's output (ignored entries), copied aside before the agent runs. */
export interface InstallOutput {
  dir: string
  entries: Buffer[]
}

/** Copies what the install left outside the tree to `<tmp>/installed`, before the agent runs. */
export function keepInstallOutput(ws: Workspace, entries: Buffer[], tmp: string): InstallOutput {
  const dir = path.join(tmp, 'installed')
  fs.mkdirSync(dir, { recursive: true })
  carryEntries(ws.dir, dir, entries, 'copy')
  return { dir, entries }
}

export async function runTests(
  ctx: PhaseContext,
  phase: PhasePlan,
  /** The agent's result: the diff's result tree, in the workspace's object store. */
  result: { gitDir: string; tree: string },
  /** What the install phase left outside the tree, when it ran. */
  installed: InstallOutput | undefined,
  /** The baseline's cases, when it ran: each test is classified by the change. */
  baseline: Report['tests']['baseline'],
  tmp: string
): Promise<TestsStageRecord> {
  const { plan } = ctx
  // A fresh tree for each run of the command: the last one takes the install output itself.
  const fresh = async (name: string, last: boolean): Promise<string> => {
    const dir = await sandboxFolder(plan, path.join(tmp, name), result)
    if (installed) {
      carryEntries(installed.dir, dir, installed.entries, last ? 'move' : 'copy')
      await ownForSandbox(plan, dir)
    }
    return dir
  }
  const dir = await fresh('tests', false)
  let tests: PhaseRun
  try {
    tests = await runPhase(ctx, phase, dir, OUTPUT_FILES.testsLog)
  } catch (error) {
    return { services: servicesOf(error), stop: asError(error) }
  }
  // The report files of this run are kept in the output folder (the re-run's and the baseline's
  // are read only).
  const results = await collectTestReports(dir, plan.capture.testReports, {
    outDir: plan.outputDir,
    maxBytes: plan.capture.maxLogBytes,
    secretValues: ctx.secretValues
  })
  let rerun: Report['tests']['rerun'] | undefined
  let rerunPassed = false
  const services = [...tests.services]
  let stop: Error | undefined
  const base = baseline ? { exitCode: baseline.phase.exitCode, cases: baseline.cases } : null
  const diagnosis: TestsDiagnosis[] = []
  const failedRun = tests.result.exitCode !== 0 || results.cases.some((c) => c.status === 'failed')
  if (
    failedRun &&
    base !== null &&
    failsLikeBase(base, { exitCode: tests.result.exitCode, cases: results.cases })
  ) {
    diagnosis.push(sameAsBaseDiagnosis())
    ctx.log.warn('the tests fail the same way on the base tree: the test command is likely wrong')
  }
  if (failedRun) {
    const offline = await networkErrorInLog(path.join(plan.outputDir, OUTPUT_FILES.testsLog))
    if (offline !== null) diagnosis.push(noNetworkDiagnosis('tests', offline))
  }
  // A cancelled run re-runs nothing: the pipeline records what ran, then stops.
  if (shouldRerun(tests.result, results.cases, base) && ctx.signal?.aborted !== true) {
    // Room on the scratch filesystem for the second copy (best effort).
    await fs.promises.rm(dir, { recursive: true, force: true }).catch(() => undefined)
    const again = await fresh('rerun', true)
    const second = await runPhase(ctx, phase, again, OUTPUT_FILES.rerunLog, {
      nameSuffix: '-rerun'
    }).catch((error: unknown) => {
      services.push(...servicesOf(error))
      stop = asError(error)
      return undefined
    })
    if (second) {
      services.push(...second.services)
      const againResults = await collectTestReports(again, plan.capture.testReports)
      const flaky = markFlaky(results.cases, againResults.cases)
      rerun = { phase: second.report, flaky }
      rerunPassed =
        second.result.exitCode === 0 && results.cases.every((c) => c.status !== 'failed')
      if (flaky.length > 0)
        ctx.log.warn(`flaky (failed, then passed on the re-run): ${flaky.length}`)
    }
  }
  const workspace = { tree: result.tree, installOutput: installed?.entries.length ?? 0 }
  const summary = summarize(results.cases)
  const ran: TestsRecord = {
    tests: {
      phase: tests.report,
      cases: results.cases,
      summary,
      sources: results.sources,
      workspace,
      ...(rerun ? { rerun } : {}),
      ...(diagnosis.length > 0 ? { diagnosis } : {}),
      ...(baseline ? { comparison: compareTests(baseline.cases, results.cases) } : {})
    },
    outcome: {
      ...tests.result,
      failed: summary.failed,
      reported: plan.capture.testReports.length > 0 ? summary.total : null,
      rerunPassed,
      flaky: rerun ? rerun.flaky.length : null
    }
  }
  if (stop === undefined && ran.outcome.cancelled) stop = new CancelledError('signal')
  return { ran, services, ...(stop !== undefined ? { stop } : {}) }
}

/** How much of a phase's log end is searched for a network error. */
const LOG_TAIL_BYTES = 256 * 1024

/**
 * The first network error in the end of a phase's log (our own capped, masked copy of the
 * container's output; only the matched words are kept).
 */
async function networkErrorInLog(file: string): Promise<string | null> {
  const handle = await fs.promises.open(file, 'r').catch(() => null)
  if (handle === null) return null
  try {
    const { size } = await handle.stat()
    const length = Math.min(size, LOG_TAIL_BYTES)
    const buffer = Buffer.alloc(length)
    await handle.read(buffer, 0, length, size - length)
    return networkError(buffer.toString('utf8'))
  } finally {
    await handle.close()
  }
}

/** The same test command on a separate copy of the unchanged tree, before the agent runs. */
export async function runBaseline(
  ctx: PhaseContext,
  phase: PhasePlan,
  ws: Workspace,
  tmp: string,
  /** After an install phase: a copy of its result (the same dependencies the agent gets). */
  fromInstalled: boolean
): Promise<BaselineRecord> {
  let dir: string
  if (fromInstalled) {
    dir = path.join(tmp, 'baseline')
    copyWorkspace(ws.dir, dir)
    await ownForSandbox(ctx.plan, dir)
  } else dir = await sandboxFolder(ctx.plan, path.join(tmp, 'baseline'), ws)
  let baseline: PhaseRun
  try {
    baseline = await runPhase(ctx, phase, dir, OUTPUT_FILES.baselineLog)
  } catch (error) {
    return { services: servicesOf(error), stop: asError(error) }
  }
  const results = await collectTestReports(dir, ctx.plan.capture.testReports)
  await fs.promises.rm(dir, { recursive: true, force: true }).catch(() => undefined)
  const { result } = baseline
  // The engine failed under the baseline: the run ends with infrastructure-error.
  const stop = result.cancelled
    ? new CancelledError('signal')
    : result.engineFault === true
      ? new InfrastructureError(`the baseline container failed: ${result.error}`)
      : undefined
  return {
    baseline: { phase: baseline.report, summary: results.summary, cases: results.cases },
    services: baseline.services,
    ...(stop ? { stop } : {})
  }
}

/** What a stage stops the run with: the error as thrown, or one carrying its message. */
function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(errorMessage(error))
}
