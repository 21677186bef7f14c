// The tests stage: the test command on the agent's tree, one re-run of failures on a fresh copy
// (tests that pass then are flaky), and the comparison with the baseline.
import * as path from 'node:path'
import { CancelledError, InfrastructureError } from '../errors.js'
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

export async function runTests(
  ctx: PhaseContext,
  phase: PhasePlan,
  ws: Workspace,
  report: Report,
  tmp: string,
  /** Build output the diff left out (ignored paths), carried into the re-run's fresh copy. */
  ignoredRaw: Buffer[] = []
): Promise<NonNullable<PhaseOutcomes['tests']>> {
  const { plan } = ctx
  const onServices = recordServices(report)
  const tests = await runPhase(ctx, phase, ws.dir, OUTPUT_FILES.testsLog, { onServices })
  report.tests.phase = tests.report
  const results = await collectTestReports(ws.dir, plan.capture.testReports)
  let rerunPassed = false
  if (shouldRerun(tests.result, results.cases)) {
    if (ctx.signal?.aborted) throw new CancelledError(String(ctx.signal.reason ?? 'signal'))
    const tree = { gitDir: ws.gitDir, tree: report.diff.resultTree ?? ws.tree }
    const dir = await sandboxFolder(plan, path.join(tmp, 'rerun'), tree)
    // The build output the diff left out (e.g. node_modules) goes along.
    carryEntries(ws.dir, dir, ignoredRaw)
    await ownForSandbox(plan, dir)
    const rerun = await runPhase(ctx, phase, dir, OUTPUT_FILES.rerunLog, {
      nameSuffix: '-rerun',
      onServices
    })
    const again = await collectTestReports(dir, plan.capture.testReports)
    const flaky = markFlaky(results.cases, again.cases)
    report.tests.rerun = { phase: rerun.report, flaky }
    rerunPassed = rerun.result.exitCode === 0 && results.cases.every((c) => c.status !== 'failed')
    if (flaky.length > 0) ctx.log.warn(`flaky (failed, then passed on the re-run): ${flaky.length}`)
  }
  report.tests.cases = results.cases
  report.tests.summary = summarize(results.cases)
  report.tests.sources = results.sources
  if (report.tests.baseline)
    report.tests.comparison = compareTests(report.tests.baseline.cases, results.cases)
  if (tests.result.cancelled) throw new CancelledError('signal')
  return {
    ...tests.result,
    failed: report.tests.summary.failed,
    rerunPassed,
    flaky: report.tests.rerun ? report.tests.rerun.flaky.length : null
  }
}

/** The same test command on a separate copy of the unchanged tree, before the agent runs. */
export async function runBaseline(
  ctx: PhaseContext,
  phase: PhasePlan,
  ws: Workspace,
  report: Report,
  tmp: string,
  /** After an install phase: a copy of its result (the same dependencies the agent gets). */
  fromInstalled = false
): Promise<void> {
  let dir: string
  if (fromInstalled) {
    dir = path.join(tmp, 'baseline')
    copyWorkspace(ws.dir, dir)
    await ownForSandbox(ctx.plan, dir)
  } else dir = await sandboxFolder(ctx.plan, path.join(tmp, 'baseline'), ws)
  const baseline = await runPhase(ctx, phase, dir, OUTPUT_FILES.baselineLog, {
    onServices: recordServices(report)
  })
  const results = await collectTestReports(dir, ctx.plan.capture.testReports)
  report.tests.baseline = { phase: baseline.report, summary: results.summary, cases: results.cases }
  if (baseline.result.cancelled) throw new CancelledError('signal')
  // The engine failed under the baseline: the run ends here (infrastructure-error).
  if (baseline.result.engineFault === true)
    throw new InfrastructureError(`the baseline container failed: ${baseline.result.error}`)
}

function recordServices(report: Report): (reports: ServiceReport[]) => void {
  return (reports) => {
    report.services = [...(report.services ?? []), ...reports]
  }
}
