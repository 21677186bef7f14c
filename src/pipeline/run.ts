import * as fs from 'node:fs'
import * as path from 'node:path'
import { performance } from 'node:perf_hooks'
import { CancelledError, InfrastructureError, errorMessage } from '../errors.js'
import { captureDiff } from '../evidence/capture.js'
import type { DiffCapture } from '../evidence/capture.js'
import { runnerFacts } from '../evidence/metadata.js'
import { Redactor } from '../redact.js'
import { maskLine, runSecretValues } from '../evidence/secrets.js'
import { maskingLogger } from '../log.js'
import type { Logger } from '../log.js'
import type { PhaseName, PhasePlan, RunPlan, RunSecrets } from '../plan.js'
import { emptyReport } from '../report/empty.js'
import { OUTPUT_FILES } from '../report/output.js'
import type { Report, RunSteps } from '../report/report.js'
import type { Runtime } from '../sandbox/types.js'
import type { CacheStore } from '../cache/store.js'
import { lockfileFindings } from '../evidence/lockfiles.js'
import { prepareWorkspace } from '../workspace/workspace.js'
import type { Scratch } from '../workspace/bounded.js'
import { defaultTempRoot, makeRunTemp } from '../workspace/temp.js'
import { runAgent } from './agent.js'
import { closeEgress, openEgress } from './egress.js'
import type { EgressSession } from '../egress/session.js'
import type { AgentRecord } from './agent.js'
import { tokenUsage } from '../evidence/cost.js'
import { estimateCost } from '../prices.js'
import { checkFull, openScratch } from './scratch.js'
import { watchCancellation } from './cancel.js'
import { alongside, timed } from './alongside.js'
import { finishRun } from './finish.js'
import { reviewThreats } from './threat-review.js'
import { isResolved, resolvePlan } from './resolve.js'
import type { ResolvedPlan } from './resolve.js'
import { recordImage, resolveRunImage } from './image.js'
import type { VerifyImage } from './image.js'
import type { PhaseOutcomes } from './outcome.js'
import { ownership } from './phase.js'
import type { PhaseContext } from './phase.js'
import { runInstallPhase } from './setup.js'
import { installFailedDiagnosis } from '../evidence/diagnosis.js'
import { keepInstallOutput, runBaseline, runTests } from './tests.js'
import type { InstallOutput } from './tests.js'
import type { ServiceReport } from '../services/record.js'
import { KEPT_REPORTS_DIR } from '../evidence/test-reports/index.js'

export type { RunSecrets } from '../plan.js'

/** The task's text kept in report.json (the review shows it). */
const MAX_TASK_CHARS = 4000

export interface PipelineDeps {
  runtime: Runtime
  log: Logger
  /** Aborted on SIGINT/SIGTERM or job cancellation. */
  signal?: AbortSignal
  /** Parent of the run's temporary folder (default: the OS temp dir / RUNNER_TEMP). */
  tempRoot?: string
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
 * The run: image → workspace → baseline → agent → evidence → tests → report. Every stage writes
 * what it learned into the report as it goes, so a run that fails, times out or is cancelled
 * still leaves its evidence; the runtime's containers and the temporary folder are removed in
 * every case.
 */
export async function runPipeline(
  givenPlan: RunPlan,
  secrets: RunSecrets,
  deps: PipelineDeps
): Promise<RunResult> {
  let plan = givenPlan
  // Every env value and every credential the proxy injects; token shapes found later join it.
  const secretValues = runSecretValues(secrets)
  const redactor = new Redactor(secretValues)
  // Everything the pipeline logs can carry agent-made text (file names, reasons): masked too,
  // known values and token shapes alike.
  const log = maskingLogger(deps.log, (m) => maskLine(redactor, m))
  const { runtime, signal } = deps
  const out = plan.outputDir
  const report = emptyReport(plan)
  if (deps.local === true) report.local = true
  // The task as the review shows it (cut; task.md in the output folder has all of it).
  const taskChars = [...secrets.task]
  report.task.text = taskChars.slice(0, MAX_TASK_CHARS).join('')
  if (taskChars.length > MAX_TASK_CHARS) report.task.truncated = true
  const started = performance.now()
  // How long the run's own steps take, into the report as each ends.
  const step =
    (name: keyof RunSteps) =>
    (ms: number): void => {
      report.cost.steps = { ...report.cost.steps, [name]: ms }
    }
  if (deps.startupMs !== undefined) step('startupMs')(Math.round(deps.startupMs))
  const tmp = await prepareFolders(plan, secrets.task, redactor, deps.tempRoot)
  const phases: PhaseOutcomes = { testsConfigured: findPhase(plan, 'tests') !== undefined }
  const cancel = watchCancellation(signal, report, out, redactor, log)
  let caught: unknown
  let scratch: Scratch | undefined
  let egress: EgressSession | undefined
  try {
    const cache = deps.cache
      ? { store: deps.cache.store, dir: deps.cache.dir ?? path.join(tmp, 'cache') }
      : undefined
    // The engine's facts, the agent image, the workspace (on its scratch filesystem) and the
    // egress proxy do not depend on each other: they are made at the same time, and the run
    // waits for all of them.
    const given = plan
    const [resolvedPlan, image, { bounded, ws }] = await alongside(log, 1, [
      (l) => timed(() => resolved(given, runtime, report, l), step('resolveMs')),
      (l) =>
        timed(
          () => resolveRunImage(given, runtime, l, cache, signal, deps.verifyImage),
          step('imageMs')
        ),
      async (l) => {
        const bounded = await timed(() => openScratch(tmp, given, report, l), step('scratchMs'))
        scratch = bounded
        const ws = await timed(
          () =>
            l.group('workspace', async () => {
              const prepared = await prepareWorkspace(
                given.repo.path,
                given.repo.ref,
                tmp,
                path.join(bounded.dir, 'workspace'),
                {
                  ...ownership(given),
                  ...(secrets.carry !== undefined ? { carry: secrets.carry } : {})
                }
              )
              l.info(`workspace: ${given.repo.ref} at ${prepared.commit}`)
              if (given.continuation !== undefined)
                l.info(`continues run ${given.continuation.runId}: ${given.continuation.note}`)
              return prepared
            }),
          step('workspaceMs')
        )
        return { bounded, ws }
      },
      async (l) => {
        const start = performance.now()
        egress = await openEgress(given, secrets.egress, { ...deps, log: l })
        if (egress) step('proxyStartMs')(Math.round(performance.now() - start))
      }
    ])
    plan = resolvedPlan
    recordImage(report, image)
    for (const w of image.warnings) log.warn(w)
    report.repo.headSha = ws.commit
    cancel.check()
    // The service containers of the test phases, recorded as they start (also when they fail).
    const onServices = (reports: ServiceReport[]): void => {
      report.services = [...(report.services ?? []), ...reports]
    }
    const ctx: PhaseContext = {
      plan,
      runtime,
      log,
      imageId: image.id,
      taskFile: path.join(tmp, 'task.md'),
      env: secrets.env,
      secretValues,
      ...(signal ? { signal } : {})
    }

    const setupPhase = findPhase(plan, 'setup')
    let installed: InstallOutput | undefined
    if (setupPhase) {
      const install = await runInstallPhase(ctx, setupPhase, ws, {
        runtime,
        log,
        ...(deps.proxyScript !== undefined ? { proxyScript: deps.proxyScript } : {}),
        ...(cache ? { cache } : {}),
        scratch: bounded,
        imageKey: (await runtime.imageBuildKey?.(image.id)) ?? image.id
      })
      report.setup = install.setup
      await checkFull(bounded, report, install.filledScratch)
      if (install.stop && !(install.stop instanceof CancelledError) && findPhase(plan, 'tests'))
        report.tests.diagnosis = [installFailedDiagnosis(install.stop.message)]
      if (install.stop) throw install.stop
      cancel.check()
      // Before anything else runs in the workspace: what the install left outside the tree.
      installed = keepInstallOutput(ws, install.output, bounded.dir)
      await checkFull(bounded, report)
    }

    const baselinePhase = findPhase(plan, 'baseline')
    if (baselinePhase) {
      const b = await runBaseline(
        ctx,
        baselinePhase,
        ws,
        bounded.dir,
        setupPhase !== undefined,
        onServices
      )
      report.tests.baseline = b.baseline
      if (b.cancelled) throw new CancelledError('signal')
      if (b.engineFault !== undefined) throw new InfrastructureError(b.engineFault)
    }
    cancel.check()

    const agentPhase = findPhase(plan, 'agent') as PhasePlan
    step('beforeAgentMs')(Math.round(performance.now() - started))
    // The agent stage closes the egress session from here on.
    const session = egress
    egress = undefined
    const agent = await runAgent(
      ctx,
      agentPhase,
      ws,
      bounded,
      session,
      secrets.egress,
      (summary) => (report.egress = summary),
      { log }
    )
    recordAgent(report, agent)
    phases.agent = {
      ...agent.run.result,
      timeoutMs: agentPhase.timeoutMs,
      memoryBytes: plan.sandbox.memoryBytes
    }
    await checkFull(bounded, report)

    const diffStart = Date.now()
    const capture = await log.group('diff', async () => {
      const c = await captureDiff(ws, plan.policy, redactor, path.join(out, OUTPUT_FILES.diff))
      for (const w of c.warnings) log.warn(w)
      const { read, reused } = c.snapshot
      log.info(`snapshot: ${read} file(s) read, ${reused} unchanged since written (stat record)`)
      log.info(`${c.diff.totalFiles} file(s) changed, diff sha256 ${c.diff.sha256}`)
      return c
    })
    recordCapture(report, capture)
    step('diffMs')(Date.now() - diffStart)
    const threatStart = performance.now()
    report.threatReview = await reviewThreats(capture, log)
    step('threatReviewMs')(Math.round(performance.now() - threatStart))
    if (agent.run.result.cancelled) throw new CancelledError('signal')

    const testsPhase = findPhase(plan, 'tests')
    const a = agent.run.result
    if (testsPhase && a.error === undefined && !a.timedOut && !a.oomKilled && a.exitCode === 0) {
      cancel.check()
      const t = await runTests(
        ctx,
        testsPhase,
        { gitDir: ws.gitDir, tree: capture.diff.resultTree },
        installed,
        report.tests.baseline,
        bounded.dir,
        onServices
      )
      Object.assign(report.tests, t.tests)
      phases.tests = t.outcome
      await checkFull(bounded, report)
      if (t.outcome.cancelled) throw new CancelledError('signal')
      cancel.check()
    }
  } catch (error) {
    caught = error
  } finally {
    // A run that ended before its agent stage: the proxy it started is stopped, its (empty)
    // evidence written.
    if (egress)
      report.egress = await closeEgress(egress, plan, secrets.egress, log).catch((e: unknown) => {
        log.warn(`egress: ${errorMessage(e)}`)
        return report.egress
      })
    await cancel.settle()
    await finishRun(plan, report, phases, caught, tmp, { runtime, log, redactor, scratch })
  }
  return {
    report,
    reportPath: path.join(out, OUTPUT_FILES.report),
    diffSha256: report.diff.sha256,
    ...(caught !== undefined ? { error: caught } : {})
  }
}

/** The resolution of the plan (the resolve step, unless the caller resolved it) into the report. */
async function resolved(
  plan: RunPlan,
  runtime: Runtime,
  report: Report,
  log: Logger
): Promise<ResolvedPlan> {
  const r = isResolved(plan) ? plan : await resolvePlan(plan, runtime)
  const { isolation, note } = r.resolution
  if (isolation !== null) {
    report.isolation = isolation
    log.info(`isolation: ${isolation.tier} (${isolation.reasons.join('; ')})`)
  } else if (note !== null) log.info(`runtime: ${r.sandbox.runtime} (${note})`)
  report.sandbox.runtime = r.sandbox.runtime
  report.runner = runnerFacts(r.resolution.engine, r.sandbox.runtime)
  return r
}

/** The agent's phase, where its settings were applied, and its model use, into the report. */
function recordAgent(report: Report, agent: AgentRecord): void {
  Object.assign(report.agent, agent.run.report)
  if (agent.run.result.applied) {
    report.sandbox.applied = agent.run.result.applied
    report.sandbox.source = 'inspect'
  }
  const { usage } = agent
  report.cost.usageFile = {
    status: usage.status,
    ...(usage.detail !== undefined ? { detail: usage.detail } : {})
  }
  // What the agent said about its model use (usage.json), below what the proxy measured.
  const measured = report.egress.transcript
  report.cost.tokens = tokenUsage(measured, usage.usage)
  // The agent's own claim of its cost: usage.json, else what its CLI reported.
  const claimed = usage.usage?.costUsd
  const cliCost = agent.answer.cli.costUsd
  if (claimed !== undefined) {
    report.cost.usd = claimed
    report.cost.usdSource = 'usage.json'
  } else if (cliCost !== null) {
    report.cost.usd = cliCost
    report.cost.usdSource = 'cli'
  }
  report.cost.estimate = estimateCost(measured)
  if (agent.answer.answer) report.agent.message = agent.answer.answer
  if (agent.answer.note !== undefined) report.agent.messageNote = agent.answer.note
  if (agent.findings) report.findings = agent.findings
  if (measured && report.agent.model === null && measured.models.length > 0)
    report.agent.model = measured.models.join(', ')
}

/** The diff, its violations and protected changes, and the dependency changes, into the report. */
function recordCapture(report: Report, capture: DiffCapture): void {
  report.diff = capture.diff
  report.policy.violations.push(...capture.violations)
  report.policy.protected.push(...capture.protected)
  report.dependencies = capture.dependencies
  if (report.setup) {
    const { lockfiles, findings } = lockfileFindings(report.setup, report.dependencies)
    report.setup.lockfiles = lockfiles
    report.policy.protected.push(...findings)
  }
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
