// The tests stage: the test command on the agent's tree, one re-run of failures on a fresh copy
// (tests that pass then are flaky), and the comparison with the baseline.
import * as path from 'node:path'
import { compareTests, markFlaky, shouldRerun } from '../evidence/compare.js'
import { collectTestReports, summarize } from '../evidence/tests/index.js'
import type { PhasePlan } from '../plan.js'
import { OUTPUT_FILES } from '../report/output.js'
import type { Report } from '../report/report.js'
import type { Workspace } from '../workspace/workspace.js'
import { carryEntries, copyWorkspace } from '../workspace/carry.js'
import type { ServiceReport } from '../services/services.js'
import type { PhaseOutcomes } from './outcome.js'
import { ownForSandbox, runPhase, sandboxFolder } from './phase.js'
import type { PhaseContext } from './phase.js'

/** What the tests stage returns: the report's tests record and the outcome of the phase. */
export interface TestsRecord {
  tests: Pick<Report['tests'], 'phase' | 'cases' | 'summary' | 'sources'> &
    Partial<Pick<Report['tests'], 'rerun' | 'comparison'>>
  outcome: NonNullable<PhaseOutcomes['tests']>
}

export async function runTests(
  ctx: PhaseContext,
  phase: PhasePlan,
  ws: Workspace,
  /** The tree of the agent's result (the re-run's fresh copy is made from it). */
  resultTree: string | null,
  /** The baseline's cases, when it ran: each test is classified by the change. */
  baseline: Report['tests']['baseline'],
  tmp: string,
  /** Build output the diff left out (ignored paths), carried into the re-run's fresh copy. */
  ignoredRaw: Buffer[],
  /** Receives the reports of the phase's service containers (also when they fail to start). */
  onServices: (reports: ServiceReport[]) => void
): Promise<TestsRecord> {
  const { plan } = ctx
  const tests = await runPhase(ctx, phase, ws.dir, OUTPUT_FILES.testsLog, { onServices })
  const results = await collectTestReports(ws.dir, plan.capture.testReports)
  let rerun: Report['tests']['rerun'] | undefined
  let rerunPassed = false
  // A cancelled run re-runs nothing: the pipeline records what ran, then stops.
  if (shouldRerun(tests.result, results.cases) && ctx.signal?.aborted !== true) {
    const tree = { gitDir: ws.gitDir, tree: resultTree ?? ws.tree }
    const dir = await sandboxFolder(plan, path.join(tmp, 'rerun'), tree)
    // The build output the diff left out (e.g. node_modules) goes along.
    carryEntries(ws.dir, dir, ignoredRaw)
    await ownForSandbox(plan, dir)
    const second = await runPhase(ctx, phase, dir, OUTPUT_FILES.rerunLog, {
      nameSuffix: '-rerun',
      onServices
    })
    const againResults = await collectTestReports(dir, plan.capture.testReports)
    const again = { phaseReport: second.report, exitCode: second.result.exitCode }
    const flaky = markFlaky(results.cases, againResults.cases)
    rerun = { phase: again.phaseReport, flaky }
    rerunPassed = again.exitCode === 0 && results.cases.every((c) => c.status !== 'failed')
    if (flaky.length > 0) ctx.log.warn(`flaky (failed, then passed on the re-run): ${flaky.length}`)
  }
  const summary = summarize(results.cases)
  return {
    tests: {
      phase: tests.report,
      cases: results.cases,
      summary,
      sources: results.sources,
      ...(rerun ? { rerun } : {}),
      ...(baseline ? { comparison: compareTests(baseline.cases, results.cases) } : {})
    },
    outcome: {
      ...tests.result,
      failed: summary.failed,
      rerunPassed,
      flaky: rerun ? rerun.flaky.length : null
    }
  }
}

/** The same test command on a separate copy of the unchanged tree, before the agent runs. */
export async function runBaseline(
  ctx: PhaseContext,
  phase: PhasePlan,
  ws: Workspace,
  tmp: string,
  /** After an install phase: a copy of its result (the same dependencies the agent gets). */
  fromInstalled: boolean,
  onServices: (reports: ServiceReport[]) => void
): Promise<{
  baseline: NonNullable<Report['tests']['baseline']>
  cancelled: boolean
  /** The engine failed under the baseline: why (the run ends with infrastructure-error). */
  engineFault?: string
}> {
  let dir: string
  if (fromInstalled) {
    dir = path.join(tmp, 'baseline')
    copyWorkspace(ws.dir, dir)
    await ownForSandbox(ctx.plan, dir)
  } else dir = await sandboxFolder(ctx.plan, path.join(tmp, 'baseline'), ws)
  const baseline = await runPhase(ctx, phase, dir, OUTPUT_FILES.baselineLog, { onServices })
  const results = await collectTestReports(dir, ctx.plan.capture.testReports)
  return {
    baseline: { phase: baseline.report, summary: results.summary, cases: results.cases },
    cancelled: baseline.result.cancelled === true,
    ...(baseline.result.engineFault === true
      ? { engineFault: `the baseline container failed: ${baseline.result.error}` }
      : {})
  }
}
