import type { Runner } from '../runner.js'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { performance } from 'node:perf_hooks'
import { CancelledError, errorMessage } from '../errors.js'
import { captureDiff } from '../evidence/capture.js'
import type { DiffCapture } from '../evidence/capture.js'
import { Redactor } from '../redact.js'
import { maskLine, runSecretValues } from '../evidence/secrets.js'
import { maskingLogger } from '../log.js'
import type { Logger } from '../log.js'
import type { PhaseName, PhasePlan, RunPlan, RunSecrets } from '../plan.js'
import { OUTPUT_FILES } from '../report/output.js'
import type { Report, RunSteps } from '../report/report.js'
import type { Runtime } from '../sandbox/types.js'
import type { CacheStore } from '../cache/store.js'
import type { Workspace } from '../workspace/workspace.js'
import { defaultTempRoot, makeRunTemp } from '../workspace/temp.js'
import { runAgent } from './agent.js'
import { assembleReport, startRecords } from './assemble.js'
import type { RunEnd } from './assemble.js'
import { EgressScope } from './egress.js'
import { watchCancellation } from './cancel.js'
import { finishRun } from './finish.js'
import { runInstallPhase } from './setup.js'
import { startRun } from './startup.js'
import { reviewThreats } from './threat-review.js'
import type { VerifyImage } from './image.js'
import { KEPT_REPORTS_DIR } from '../evidence/test-reports/index.js'
import { keepInstallOutput, runBaseline, runTests } from './tests.js'
import type { InstallOutput } from './tests.js'
import type { ToolEnv } from '../workspace/bounded.js'

export type { RunSecrets } from '../plan.js'

export interface PipelineDeps {
  runtime: Runtime
  log: Logger
  /** Aborted on SIGINT/SIGTERM or job cancellation. */
  signal?: AbortSignal
  /** Parent of the run's temporary folder (default: the OS temp dir). */
  tempRoot?: string
  /** The runner's facts (report.json's runner.github); none off a runner. */
  runner?: Runner
  /** The host's environment for the tools of the scratch filesystem (`Host.toolEnv`). */
  toolEnv: ToolEnv
  /** The bundled egress proxy (default: proxy.cjs next to the running bundle). */
  proxyScript?: string
  /** From the process's start to this call (ms), when the caller is the process's entry. */
  startupMs?: number
  /**
   * Where the dependency cache and the agent image across machines are kept (none: no cache).
   * `dir` stages entries; the Actions cache needs the same path in every run (default: the run's
   * temporary folder).
   */
  cache?: { store: CacheStore; dir?: string }
  /** A local run (the CLI): no pull request and no gate; the review's next step says so. */
  local?: boolean
  /** Checks a published preset image's build provenance (none: the report says it was skipped). */
  verifyImage?: VerifyImage
}

export interface RunResult {
  report: Report
  reportPath: string
  diffSha256: string | null
  /** The error that ended the run early, if any (the report is written regardless). */
  error?: unknown
}

/**
 * The run: start (resolve, image, workspace, proxy) → install → baseline → agent → evidence →
 * tests → report. Each stage returns its record, kept as it arrives; report.json is assembled
 * from the records at the end (or when the run is cancelled), so a run that fails, times out or is
 * cancelled still leaves its evidence. The runtime's containers, the egress session and the
 * temporary folder are removed in every case.
 */
export async function runPipeline(
  plan: RunPlan,
  secrets: RunSecrets,
  deps: PipelineDeps
): Promise<RunResult> {
  // Every env value and every credential the proxy injects; token shapes found later join it.
  const secretValues = runSecretValues(secrets)
  const redactor = new Redactor(secretValues)
  // Everything the pipeline logs can carry agent-made text (file names, reasons): masked too,
  // known values and token shapes alike.
  const log = maskingLogger(deps.log, (m) => maskLine(redactor, m))
  const { runtime, signal } = deps
  const records = startRecords(secrets.task, deps.startupMs, deps.local === true)
  const started = performance.now()
  const tmp = await prepareFolders(plan, secrets.task, redactor, deps.tempRoot)
  const soFar = (end: RunEnd): Report => assembleReport(plan, records, end)
  const cancel = watchCancellation(signal, soFar, plan.outputDir, redactor, log)
  const egress = new EgressScope(plan, secrets.egress, { ...deps, log })
  let caught: unknown
  try {
    const cache = deps.cache && { ...deps.cache, dir: deps.cache.dir ?? path.join(tmp, 'cache') }
    const start = await startRun(
      plan,
      secrets,
      { ...deps, log, tmp, cache, egress, secretValues },
      records
    )
    const { ctx, image, scratch, ws } = start
    const resolved = ctx.plan
    cancel.check()
    // A phase that filled the scratch filesystem (known, or asked) is a violation of workspace-size.
    const checkFull = async (known?: boolean): Promise<void> => {
      records.scratchFull ||= known ?? (await scratch.full())
    }
    const setupPhase = findPhase(resolved, 'setup')
    let installed: InstallOutput | undefined
    if (setupPhase) {
      const imageKey = (await runtime.imageBuildKey?.(image.id)) ?? image.id
      const install = await runInstallPhase(ctx, setupPhase, ws, {
        ...{ runtime, log, scratch, imageKey, ...(cache ? { cache } : {}) },
        ...(deps.proxyScript !== undefined ? { proxyScript: deps.proxyScript } : {})
      })
      records.install = install
      await checkFull(install.filledScratch)
      if (install.stop) throw install.stop
      cancel.check()
      // Before anything else runs in the workspace: what the install left outside the tree.
      installed = keepInstallOutput(ws, install.output, scratch.dir)
      await checkFull()
    }
    const baselinePhase = findPhase(resolved, 'baseline')
    if (baselinePhase) {
      records.baseline = await runBaseline(ctx, baselinePhase, ws, scratch.dir, !!setupPhase)
      if (records.baseline.stop !== undefined) throw records.baseline.stop
    }
    cancel.check()
    records.steps.beforeAgentMs = Math.round(performance.now() - started)
    const agentPhase = findPhase(resolved, 'agent') as PhasePlan
    // The proxy stops when the agent's phase ends: its summary is kept then.
    const agent = await runAgent(ctx, agentPhase, ws, scratch, egress.route).finally(
      async () => (records.egress = await egress.stop())
    )
    records.agent = agent
    await checkFull()
    records.capture = await capture(ws, resolved, redactor, log, records.steps)
    const threatStart = performance.now()
    records.threatReview = await reviewThreats(records.capture, resolved.policy.threatReview, log)
    records.steps.threatReviewMs = Math.round(performance.now() - threatStart)
    const a = agent.run.result
    if (a.cancelled) throw new CancelledError('signal')
    const testsPhase = findPhase(resolved, 'tests')
    if (testsPhase && a.error === undefined && !a.timedOut && !a.oomKilled && a.exitCode === 0) {
      cancel.check()
      const result = { gitDir: ws.gitDir, tree: records.capture.diff.resultTree }
      const baseline = records.baseline?.baseline ?? null
      records.tests = await runTests(ctx, testsPhase, result, installed, baseline, scratch.dir)
      await checkFull()
      if (records.tests.stop !== undefined) throw records.tests.stop
      cancel.check()
    }
  } catch (error) {
    caught = error
  } finally {
    // The proxy's summary, once it stopped (after the agent, or now when the run ended before).
    records.egress = await egress.stop().catch((e: unknown) => {
      log.warn(`egress: ${errorMessage(e)}`)
      return undefined
    })
    await cancel.settle()
  }
  const report = await finishRun(plan, records, caught, tmp, { runtime, log, redactor })
  return {
    report,
    reportPath: path.join(plan.outputDir, OUTPUT_FILES.report),
    diffSha256: report.diff.sha256,
    ...(caught !== undefined ? { error: caught } : {})
  }
}

/** The diff, its violations and protected changes, and the dependency changes. */
async function capture(
  ws: Workspace,
  plan: RunPlan,
  redactor: Redactor,
  log: Logger,
  steps: RunSteps
): Promise<DiffCapture> {
  const diffStart = Date.now()
  const c = await log.group('diff', async () => {
    const file = path.join(plan.outputDir, OUTPUT_FILES.diff)
    const c = await captureDiff(ws, plan.policy, redactor, file)
    for (const w of c.warnings) log.warn(w)
    const { read, reused } = c.snapshot
    log.info(`snapshot: ${read} file(s) read, ${reused} unchanged since written (stat record)`)
    log.info(`${c.diff.totalFiles} file(s) changed, diff sha256 ${c.diff.sha256}`)
    return c
  })
  steps.diffMs = Date.now() - diffStart
  return c
}

function findPhase(plan: RunPlan, name: PhaseName): PhasePlan | undefined {
  return plan.phases.find((p) => p.name === name)
}

/** The output folder emptied of a previous run's files, the task written; the run's temp folder. */
async function prepareFolders(
  plan: RunPlan,
  task: string,
  redactor: Redactor,
  tempRoot: string | undefined
): Promise<string> {
  const out = plan.outputDir
  await fs.promises.mkdir(path.join(out, 'logs'), { recursive: true })
  for (const f of Object.values(OUTPUT_FILES))
    await fs.promises.rm(path.join(out, f), { force: true })
  await fs.promises.rm(path.join(out, KEPT_REPORTS_DIR), { recursive: true, force: true })
  await fs.promises.writeFile(path.join(out, OUTPUT_FILES.task), redactor.redact(task))
  const tmp = await makeRunTemp(tempRoot ?? defaultTempRoot(), plan.runId)
  await fs.promises.writeFile(path.join(tmp, 'task.md'), task, { mode: 0o444 })
  return tmp
}
