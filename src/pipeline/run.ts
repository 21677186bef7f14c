import * as fs from 'node:fs'
import * as path from 'node:path'
import { CancelledError, errorMessage } from '../errors.js'
import type { EgressInputs } from '../egress/inputs.js'
import { captureDiff } from '../evidence/capture.js'
import { phaseTotals, tokenUsage } from '../evidence/cost.js'
import { readUsage, runnerFacts } from '../evidence/metadata.js'
import { writeProvenance } from '../report/provenance.js'
import { Redactor } from '../evidence/redact.js'
import { maskLine, runSecretValues, scanOutputs } from '../evidence/secrets.js'
import { maskingLogger } from '../log.js'
import type { Logger } from '../log.js'
import type { PhaseName, PhasePlan, RunPlan } from '../plan.js'
import { emptyReport } from '../report/empty.js'
import { OUTPUT_FILES, writeOutputs } from '../report/output.js'
import type { PhaseReport, Report } from '../report/report.js'
import { UnpinnedBaseError } from '../sandbox/dockerfile.js'
import type { ImageInfo, Runtime } from '../sandbox/types.js'
import { prepareWorkspace } from '../workspace/workspace.js'
import { formatSize, makeScratch } from '../workspace/bounded.js'
import type { Scratch } from '../workspace/bounded.js'
import { defaultTempRoot, makeRunTemp } from '../workspace/temp.js'
import { closeEgress, openEgress } from './egress.js'
import { classifyOutcome } from './outcome.js'
import type { PhaseOutcomes } from './outcome.js'
import { ownForSandbox, runPhase, sandboxFolder } from './phase.js'
import type { PhaseContext, PhaseRun } from './phase.js'
import { runBaseline, runTests } from './tests.js'
import { decideIsolation } from './isolation.js'
import { runInstallPhase } from './setup.js'
import { finishSetupReport } from '../setup/setup.js'
import { restoreImage, saveImage } from '../cache/caches.js'
import type { CacheStore } from '../cache/store.js'

export interface RunSecrets {
  /** The task text (the plan only holds its hash). */
  task: string
  env: { name: string; value: string }[]
  /** With `network: allowlist`: the proxy's settings, credentials included. */
  egress?: EgressInputs
  /** Other values to mask in every output (credentials the run holds). */
  secrets?: string[]
}

export interface PipelineDeps {
  runtime: Runtime
  log: Logger
  /** Aborted on SIGINT/SIGTERM or job cancellation. */
  signal?: AbortSignal
  /** Parent of the run's temporary folder (default: the OS temp dir / RUNNER_TEMP). */
  tempRoot?: string
  /** The bundled egress proxy (default: proxy.cjs next to the running bundle). */
  proxyScript?: string
  /**
   * Where the dependency cache and the agent image across machines are kept (none: no cache).
   * `dir` stages entries; the Actions cache needs the same path in every run (default: the run's
   * temporary folder).
   */
  cache?: { store: CacheStore; dir?: string }
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
  const tmp = await prepareFolders(plan, secrets.task, redactor, deps.tempRoot)
  const phases: PhaseOutcomes = { testsConfigured: findPhase(plan, 'tests') !== undefined }
  const checkCancelled = (): void => {
    if (signal?.aborted) throw new CancelledError(String(signal.reason ?? 'signal'))
  }
  // Cancelled: the report (`cancelled`) and the evidence so far are written at once, before the
  // containers are stopped (the runner kills the step 10 s after its first signal).
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
  let caught: unknown
  let scratch: Scratch | undefined
  try {
    if (plan.isolation !== null && plan.isolation !== undefined) {
      // The tier from the run's risk (or as named); one the daemon cannot provide fails closed.
      const decision = await decideIsolation(plan, runtime)
      plan = { ...plan, sandbox: { ...plan.sandbox, runtime: decision.tier } }
      report.isolation = decision
      report.sandbox.runtime = decision.tier
      log.info(`isolation: ${decision.tier} (${decision.reasons.join('; ')})`)
    }
    await runtime.preflight(plan.sandbox.runtime)
    report.runner = runnerFacts(await runtime.engineFacts(), plan.sandbox.runtime)
    checkCancelled()
    const cacheDir = deps.cache ? (deps.cache.dir ?? path.join(tmp, 'cache')) : undefined
    const image = await log.group('image', async () => {
      const c = deps.cache && cacheDir !== undefined && plan.cache.image ? deps.cache : undefined
      const cacheLog = { info: (l: string) => log.info(l), warn: (l: string) => log.warn(l) }
      const imageDir = path.join(cacheDir ?? tmp, 'image-cache')
      const restored = c
        ? await restoreImage(runtime, c.store, plan.cache.scope, plan.image, imageDir, cacheLog)
        : undefined
      const resolved = await runtime.resolveImage(
        plan.image,
        { info: (l) => log.info(l) },
        { holder: plan.runId, ...(signal ? { signal } : {}) }
      )
      const use =
        c && restored
          ? await saveImage(
              runtime,
              c.store,
              plan.cache.scope,
              plan.image,
              resolved,
              restored,
              imageDir,
              cacheLog
            )
          : undefined
      return { ...resolved, ...(use ? { cacheUse: use } : {}) }
    })
    recordImage(report, image)
    if (image.cacheUse) report.image.cache = image.cacheUse
    for (const w of image.warnings) log.warn(w)
    checkCancelled()

    // Every folder the sandbox writes lives on one filesystem of workspace-size.
    const bounded = await makeScratch(tmp, plan.sandbox.workspace, (l) => log.warn(l))
    scratch = bounded
    report.sandbox.workspace = {
      sizeBytes: bounded.sizeBytes,
      enforced: bounded.enforced,
      full: false
    }
    const ws = await log.group('workspace', async () => {
      const prepared = await prepareWorkspace(
        plan.repo.path,
        plan.repo.ref,
        tmp,
        path.join(bounded.dir, 'workspace')
      )
      await ownForSandbox(plan, prepared.dir)
      log.info(`workspace: ${plan.repo.ref} at ${prepared.commit}`)
      return prepared
    })
    report.repo.headSha = ws.commit
    checkCancelled()
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
    if (setupPhase) {
      await runInstallPhase(ctx, setupPhase, ws, report, {
        runtime,
        log,
        ...(deps.proxyScript !== undefined ? { proxyScript: deps.proxyScript } : {}),
        ...(deps.cache && cacheDir !== undefined
          ? { cache: { store: deps.cache.store, dir: cacheDir } }
          : {}),
        imageKey: (await runtime.imageBuildKey?.(image.id).catch(() => undefined)) ?? image.id
      })
      checkCancelled()
    }

    const baselinePhase = findPhase(plan, 'baseline')
    if (baselinePhase)
      await runBaseline(ctx, baselinePhase, ws, report, bounded.dir, setupPhase !== undefined)
    checkCancelled()

    const agentPhase = findPhase(plan, 'agent') as PhasePlan
    // The agent's own folder for files about the run (usage.json): outside the workspace and diff.
    const agentOut = await sandboxFolder(plan, path.join(bounded.dir, 'out'))
    const egress = await openEgress(plan, secrets.egress, { ...deps, log })
    let agent: PhaseRun
    try {
      agent = await runPhase(ctx, agentPhase, ws.dir, OUTPUT_FILES.agentLog, {
        outDir: agentOut,
        ...(egress ? { egress: { network: egress.network, env: egress.env } } : {})
      })
    } finally {
      if (egress) report.egress = await closeEgress(egress, secrets.egress, out, log)
    }
    Object.assign(report.agent, agent.report)
    phases.agent = {
      ...agent.result,
      timeoutMs: agentPhase.timeoutMs,
      memoryBytes: plan.sandbox.memoryBytes
    }
    await checkFull(bounded, report)
    await recordUsage(report, agentOut)
    if (agent.result.applied) {
      report.sandbox.applied = agent.result.applied
      report.sandbox.source = 'inspect'
    }

    const capture = await log.group('diff', async () => {
      const c = await captureDiff(ws, plan.policy, redactor, path.join(out, OUTPUT_FILES.diff))
      for (const w of c.warnings) log.warn(w)
      log.info(`${c.diff.totalFiles} file(s) changed, diff sha256 ${c.diff.sha256}`)
      return c
    })
    report.diff = capture.diff
    report.policy.violations.push(...capture.violations)
    report.policy.protected.push(...capture.protected)
    report.dependencies = capture.dependencies
    if (report.setup)
      report.policy.protected.push(...finishSetupReport(report.setup, report.dependencies))
    if (agent.result.cancelled) throw new CancelledError('signal')

    const testsPhase = findPhase(plan, 'tests')
    const a = agent.result
    if (testsPhase && a.error === undefined && !a.timedOut && !a.oomKilled && a.exitCode === 0) {
      checkCancelled()
      phases.tests = await runTests(ctx, testsPhase, ws, report, bounded.dir, capture.ignoredRaw)
      await checkFull(bounded, report)
    }
  } catch (error) {
    caught = error
  } finally {
    signal?.removeEventListener('abort', onAbort)
    await early
    const classified = classifyOutcome(phases, report.policy.violations, caught)
    report.outcome = classified.outcome
    report.outcomeReason = classified.reason
    report.policy.violations.push(...classified.violations)
    report.finishedAt = new Date().toISOString()
    report.cost.wallMs = Date.now() - Date.parse(report.startedAt)
    Object.assign(report.cost, phaseTotals(phasesRun(report)))
    await scanOutputs(out, [JSON.stringify(report)], scannedFiles(), redactor).catch((e: unknown) =>
      log.error(`secret scan of the outputs: ${errorMessage(e)}`)
    )
    await writeOutputs(out, report, redactor).catch((e: unknown) =>
      log.error(`could not write the report: ${errorMessage(e)}`)
    )
    // Last of the evidence: binds every file written above.
    await writeProvenance(out).catch((e: unknown) =>
      log.error(`could not write ${OUTPUT_FILES.provenance}: ${errorMessage(e)}`)
    )
    await runtime.cleanup(plan.runId).catch((e: unknown) => log.warn(`cleanup: ${errorMessage(e)}`))
    // After the containers are gone: nothing holds the scratch filesystem any more.
    const unmounted = await scratch?.release()
    if (unmounted !== undefined) log.warn(unmounted)
    await fs.promises.rm(tmp, { recursive: true, force: true }).catch(() => undefined)
  }
  return {
    report,
    reportPath: path.join(out, OUTPUT_FILES.report),
    diffSha256: report.diff.sha256,
    // An unpinned base is a policy violation of the run, not an error of it.
    ...(caught !== undefined && !(caught instanceof UnpinnedBaseError) ? { error: caught } : {})
  }
}

/** The text files of the output folder that the secret scan reads and masks. */
function scannedFiles(): string[] {
  const o = OUTPUT_FILES
  return [o.agentLog, o.testsLog, o.rerunLog, o.baselineLog, o.task, o.egress, o.transcript]
}

/**
 * A phase that filled the scratch filesystem hit the `workspace-size` limit (writes past it got
 * ENOSPC): a policy violation naming the limit, recorded once.
 */
async function checkFull(scratch: Scratch, report: Report): Promise<void> {
  if (report.sandbox.workspace?.full === true || !(await scratch.full())) return
  report.sandbox.workspace = {
    sizeBytes: scratch.sizeBytes,
    enforced: scratch.enforced,
    full: true
  }
  report.policy.violations.push({
    rule: 'workspace-size',
    path: null,
    detail: `the sandbox filled the workspace limit of ${formatSize(scratch.sizeBytes)} (workspace-size); writes past it failed with "No space left on device"`
  })
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
  await fs.promises.writeFile(path.join(out, OUTPUT_FILES.task), redactor.redact(task))
  const tmp = await makeRunTemp(tempRoot ?? defaultTempRoot(), plan.runId)
  await fs.promises.writeFile(path.join(tmp, 'task.md'), task, { mode: 0o444 })
  return tmp
}

/** What the agent said about its model use (usage.json), below what the proxy measured. */
async function recordUsage(report: Report, agentOut: string): Promise<void> {
  const usage = await readUsage(agentOut)
  report.cost.usageFile = {
    status: usage.status,
    ...(usage.detail !== undefined ? { detail: usage.detail } : {})
  }
  const measured = report.egress.transcript
  report.cost.tokens = tokenUsage(measured, usage.usage)
  if (usage.usage) report.cost.usd = usage.usage.costUsd ?? null
  if (measured && report.agent.model === null && measured.models.length > 0)
    report.agent.model = measured.models.join(', ')
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

function recordImage(report: Report, image: ImageInfo): void {
  report.image = {
    ref: image.ref,
    id: image.id,
    baseDigests: image.baseDigests,
    dockerfileSha256: image.dockerfileSha256 ?? null,
    cached: image.cached,
    warnings: image.warnings
  }
}
