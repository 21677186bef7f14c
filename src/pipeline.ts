import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import type Docker from 'dockerode'
import { CancelledError, ConfigurationError, errorMessage } from './errors.js'
import { diffTrees } from './evidence/diff.js'
import { hashLockfiles, readUsage, runnerFacts } from './evidence/metadata.js'
import { checkPolicy, gitBlobReader } from './evidence/policy.js'
import { Redactor, StreamRedactor } from './evidence/redact.js'
import { CappedLog } from './evidence/logs.js'
import { snapshotWorkspace } from './evidence/snapshot.js'
import { baseIgnoreRules, ignoreFindings } from './evidence/ignore.js'
import { carryEntries, copyWorkspace } from './workspace/carry.js'
import { SETUP_FILES, finishSetupReport, runSetup } from './setup/setup.js'
import type { SetupReport } from './setup/setup.js'
import { startServices } from './services/services.js'
import type { ServiceReport, ServicesSession } from './services/services.js'
import { decideIsolation } from './isolation/decide.js'
import { collectTestReports, summarize } from './evidence/tests.js'
import type { TestCase } from './evidence/tests.js'
import { compareTests } from './evidence/compare.js'
import type { Logger } from './log.js'
import type { PhasePlan, RunPlan } from './plan.js'
import { sha256 } from './plan.js'
import { emptyPhase } from './report/report.js'
import type { Outcome, PhaseReport, Report } from './report/report.js'
import { writeOutputs } from './report/output.js'
import { UnpinnedBaseError, resolveImage } from './sandbox/image.js'
import type { EgressInputs } from './egress/inputs.js'
import { EGRESS_FILES, summarizeEgress, writeEgressEvidence } from './egress/evidence.js'
import { defaultProxyScript, startEgress } from './egress/sidecar.js'
import type { EgressSession } from './egress/sidecar.js'
import { containerSpec } from './sandbox/spec.js'
import type { ImageInfo, PhaseResult, Sandbox } from './sandbox/types.js'
import { chownTree, materializeTree, prepareWorkspace } from './workspace/workspace.js'
import type { Workspace } from './workspace/workspace.js'

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
  sandbox: Sandbox
  docker: Docker
  log: Logger
  /** Aborted on SIGINT/SIGTERM or job cancellation. */
  signal?: AbortSignal
  /** Parent of the run's temporary folder (default: the OS temp dir / RUNNER_TEMP). */
  tempRoot?: string
  /** The bundled egress proxy (default: proxy.cjs next to the running bundle). */
  proxyScript?: string
}

export interface RunResult {
  report: Report
  reportPath: string
  diffSha256: string | null
  /** The error that ended the run early, if any (the report is written regardless). */
  error?: unknown
}

export const OUTPUT_FILES = {
  report: 'report.json',
  diff: 'diff.patch',
  task: 'task.md',
  agentLog: 'logs/agent.log',
  testsLog: 'logs/tests.log',
  rerunLog: 'logs/tests-rerun.log',
  baselineLog: 'logs/baseline.log',
  tests: 'tests.json',
  comment: 'comment.md',
  setupLog: SETUP_FILES.log,
  setupEgress: SETUP_FILES.egress,
  ...EGRESS_FILES
} as const

/**
 * The run: image → workspace → agent → diff → tests → report. Every stage writes what it learned
 * into the report as it goes, so a run that fails, times out or is cancelled still leaves its
 * evidence; the sandbox's containers and the temporary folder are removed in every case.
 */
export async function runPipeline(
  plan: RunPlan,
  secrets: RunSecrets,
  given: PipelineDeps
): Promise<RunResult> {
  const secretValues = [...secrets.env.map((e) => e.value), ...(secrets.secrets ?? [])]
  const redactor = new Redactor(secretValues)
  // Everything the pipeline logs can carry agent-made text (file names, reasons): masked too.
  const deps: PipelineDeps = { ...given, log: redactingLogger(given.log, redactor) }
  const { log, sandbox } = deps
  const started = Date.now()
  const out = plan.outputDir
  await prepareOutputDir(out)
  await fs.promises.writeFile(path.join(out, OUTPUT_FILES.task), redactor.redact(secrets.task))
  const tmp = await fs.promises.mkdtemp(
    path.join(deps.tempRoot ?? process.env.RUNNER_TEMP ?? os.tmpdir(), `airlock-${plan.runId}-`)
  )
  const taskFile = path.join(tmp, 'task.md')
  await fs.promises.writeFile(taskFile, secrets.task, { mode: 0o444 })

  const report = initialReport(plan, started)
  let error: unknown
  let workspace: Workspace | undefined
  /** Entries the diff left out as build output (carried into the tests' re-run copy). */
  let ignoredPaths: Buffer[] = []
  const setOutcome = (outcome: Outcome, reason: string): void => {
    report.outcome = outcome
    report.outcomeReason = reason
  }
  const recordServices = (reports: ServiceReport[]): void => {
    report.services = [...(report.services ?? []), ...reports]
  }
  const checkCancelled = (): void => {
    if (deps.signal?.aborted) throw new CancelledError(String(deps.signal.reason ?? 'signal'))
  }

  try {
    if (plan.isolation !== null && plan.isolation !== undefined) {
      // The tier from the run's risk (or as named); one the daemon cannot provide fails closed.
      const decision = await decideIsolation(plan, deps.docker)
      plan = { ...plan, sandbox: { ...plan.sandbox, runtime: decision.tier } }
      report.isolation = decision
      report.sandbox.runtime = decision.tier
      log.info(`isolation: ${decision.tier} (${decision.reasons.join('; ')})`)
    }
    await sandbox.preflight(plan.sandbox.runtime)
    report.runner = await runnerFacts(deps.docker, plan.sandbox.runtime)
    checkCancelled()
    const image = await log.group('image', () =>
      resolveImage(deps.docker, plan.image, { info: (l) => log.info(l) })
    )
    recordImage(report, image)
    for (const w of image.warnings) log.warn(w)
    checkCancelled()

    workspace = await log.group('workspace', async () => {
      const ws = await prepareWorkspace(plan.repo.path, plan.repo.ref, tmp)
      if (process.getuid?.() === 0) await chownTree(ws.dir, ...containerIds(plan))
      log.info(`workspace: ${plan.repo.ref} at ${ws.commit}`)
      return ws
    })
    report.repo.headSha = workspace.commit
    checkCancelled()

    const setupPhase = plan.phases.find((p) => p.name === 'setup')
    let setupReport: SetupReport | undefined
    if (setupPhase) {
      const ws = workspace
      const setup = await runSetup(
        plan,
        ws,
        await baseIgnoreRules(ws.gitDir, ws.tree),
        plan.outputDir,
        {
          docker: deps.docker,
          proxyScript: deps.proxyScript ?? defaultProxyScript(),
          info: (l) => log.info(l),
          // No `env` values: the install gets no secrets of the run.
          runPhase: (egress) =>
            runPhase(
              plan,
              setupPhase,
              image,
              ws.dir,
              taskFile,
              { ...secrets, env: [] },
              deps,
              OUTPUT_FILES.setupLog,
              egress ? { egress } : {}
            )
        }
      )
      setupReport = setup.report
      report.setup = setup.report
      if (setup.result.cancelled) throw new CancelledError('signal')
      const r = setup.result
      if (r.error !== undefined || r.timedOut || r.oomKilled || r.exitCode !== 0) {
        const why =
          r.error ??
          (r.timedOut ? 'timed out' : r.oomKilled ? 'out of memory' : `exit ${r.exitCode}`)
        throw new SetupFailed(`the setup command failed (${why}); see ${OUTPUT_FILES.setupLog}`)
      }
      checkCancelled()
    }

    const baselinePhase = plan.phases.find((p) => p.name === 'baseline')
    if (baselinePhase) {
      // The same test command on a separate copy of the unchanged tree, before the agent runs.
      const baseDir = path.join(tmp, 'baseline')
      await fs.promises.mkdir(baseDir)
      // After an install phase: a copy of its result (the same dependencies the agent gets).
      if (setupPhase) copyWorkspace(workspace.dir, baseDir)
      else await materializeTree(workspace.gitDir, workspace.tree, baseDir)
      if (process.getuid?.() === 0) await chownTree(baseDir, ...containerIds(plan))
      const baseline = await runPhase(
        plan,
        baselinePhase,
        image,
        baseDir,
        taskFile,
        secrets,
        deps,
        OUTPUT_FILES.baselineLog,
        { onServices: recordServices }
      )
      const results = await collectTestReports(baseDir, plan.capture.testReports)
      report.tests.baseline = {
        phase: baseline.report,
        summary: results.summary,
        cases: results.cases
      }
      if (baseline.result.cancelled) throw new CancelledError('signal')
      checkCancelled()
    }

    const agentPhase = plan.phases.find((p) => p.name === 'agent') as PhasePlan
    // The agent's own folder for files about the run (usage.json): outside the workspace and diff.
    const agentOut = path.join(tmp, 'out')
    await fs.promises.mkdir(agentOut)
    if (process.getuid?.() === 0) await chownTree(agentOut, ...containerIds(plan))
    const egress = await startEgressFor(plan, secrets, deps)
    let agent: Awaited<ReturnType<typeof runPhase>>
    try {
      agent = await runPhase(
        plan,
        agentPhase,
        image,
        workspace.dir,
        taskFile,
        secrets,
        deps,
        OUTPUT_FILES.agentLog,
        { outDir: agentOut, ...(egress ? { egress } : {}) }
      )
    } finally {
      if (egress) await stopEgress(egress, report, secrets, plan.outputDir, deps)
    }
    Object.assign(report.agent, agent.report)
    const usage = await readUsage(agentOut)
    report.cost.usageFile = {
      status: usage.status,
      ...(usage.detail !== undefined ? { detail: usage.detail } : {})
    }
    if (usage.usage) {
      const u = usage.usage
      // The proxy's count (allowlist credential routes) is measured: it wins over the agent's claim.
      if (report.egress.transcript === null)
        report.cost.tokens = {
          model: u.model ?? null,
          input: u.inputTokens ?? null,
          output: u.outputTokens ?? null,
          cacheRead: u.cacheReadTokens ?? null,
          cacheWrite: u.cacheWriteTokens ?? null
        }
      report.cost.usd = u.costUsd ?? null
    }
    if (agent.result.applied) {
      report.sandbox.applied = agent.result.applied
      report.sandbox.source = 'inspect'
    }

    await log.group('diff', async () => {
      const ws = workspace as Workspace
      // Build output: what the base tree's .gitignore ignores is left out (never the agent's rules).
      const rules = await baseIgnoreRules(ws.gitDir, ws.tree)
      const snap = await snapshotWorkspace(ws.dir, ws.gitDir, undefined, ws.tree, rules)
      ignoredPaths = snap.ignoredRaw
      const diff = await diffTrees(ws.gitDir, ws.tree, snap.tree, plan.policy)
      // Secret values the agent wrote into files are masked in the patch (and flagged below).
      const patch = redactor.empty
        ? diff.patch
        : Buffer.from(
            new Redactor(secretValues, true).redact(diff.patch.toString('latin1')),
            'latin1'
          )
      const redacted = !patch.equals(diff.patch)
      await fs.promises.writeFile(path.join(out, OUTPUT_FILES.diff), patch)
      const truncation = [...diff.truncation]
      if (snap.truncated)
        truncation.push(
          `the workspace snapshot stopped at its limits: ${snap.skipped.filter((x) => x.reason === 'limit').length} file(s) not taken`
        )
      report.diff = {
        sha256: sha256(patch),
        bytes: patch.length,
        files: diff.files,
        totalFiles: diff.totalFiles,
        filesInPatch: diff.filesInPatch,
        truncated: diff.truncated || snap.truncated,
        truncation,
        redacted,
        skipped: snap.skipped.slice(0, 1000),
        ignored: { total: snap.ignoredTotal, entries: snap.ignored },
        baseTree: ws.tree,
        resultTree: snap.tree
      }
      const policy = await checkPolicy(
        { allowed: plan.policy.allowedPaths, protected: plan.policy.protectedPaths },
        // Every changed file, also beyond max-changed-files.
        diff.all.files,
        diff.all.blobs,
        gitBlobReader(ws.gitDir)
      )
      report.policy.violations.push(...policy.violations)
      report.policy.protected.push(...policy.protected, ...ignoreFindings(diff.all.files, snap))
      if (snap.ignoredTotal > 0)
        log.info(`${snap.ignoredTotal} path(s) ignored by the base tree's .gitignore rules`)
      if (diff.totalFiles > plan.policy.maxChangedFiles)
        report.policy.violations.push({
          rule: 'max-changed-files',
          path: null,
          detail: `${diff.totalFiles} files changed (max-changed-files: ${plan.policy.maxChangedFiles})`
        })
      if (diff.filesInPatch < diff.totalFiles)
        report.policy.violations.push({
          rule: 'max-diff-bytes',
          path: null,
          detail: `diff.patch holds ${diff.filesInPatch} of ${diff.totalFiles} files (max-diff-bytes: ${plan.policy.maxDiffBytes})`
        })
      if (snap.truncated)
        report.policy.violations.push({
          rule: 'snapshot-limit',
          path: null,
          detail: 'the workspace was larger than the snapshot limits; not every file was taken'
        })
      if (redacted)
        report.policy.violations.push({
          rule: 'secret-in-diff',
          path: null,
          detail:
            'the change contains the value of a secret the run knows; it is masked in diff.patch'
        })
      report.dependencies = await hashLockfiles(ws.gitDir, snap.tree, ws.dir)
      if (setupReport)
        report.policy.protected.push(...finishSetupReport(setupReport, report.dependencies))
      for (const x of snap.skipped.slice(0, 50))
        log.warn(`not taken into the diff: ${x.path} (${x.reason})`)
      for (const t of truncation) log.warn(t)
      log.info(`${diff.totalFiles} file(s) changed, diff sha256 ${report.diff.sha256}`)
    })

    if (agent.result.cancelled) throw new CancelledError('signal')
    if (agent.result.error !== undefined) {
      setOutcome('infrastructure-error', `the agent container failed: ${agent.result.error}`)
    } else if (agent.result.timedOut) {
      setOutcome(
        'timed-out',
        `the agent ran past timeout-minutes (${agentPhase.timeoutMs / 60000} min)`
      )
    } else if (agent.result.oomKilled) {
      setOutcome(
        'agent-failed',
        `the agent was killed for using more than memory (${plan.sandbox.memoryBytes} bytes)`
      )
    } else if (agent.result.exitCode !== 0) {
      setOutcome('agent-failed', `the agent exited with code ${agent.result.exitCode}`)
    } else {
      const testsPhase = plan.phases.find((p) => p.name === 'tests')
      if (testsPhase) {
        checkCancelled()
        const tests = await runPhase(
          plan,
          testsPhase,
          image,
          workspace.dir,
          taskFile,
          secrets,
          deps,
          OUTPUT_FILES.testsLog,
          { onServices: recordServices }
        )
        report.tests.phase = tests.report
        const results = await collectTestReports(workspace.dir, plan.capture.testReports)
        let rerunPassed = false
        const failedFirst = results.cases.filter((c) => c.status === 'failed')
        if (
          !tests.result.timedOut &&
          !tests.result.cancelled &&
          tests.result.error === undefined &&
          (failedFirst.length > 0 || tests.result.exitCode !== 0)
        ) {
          // Failures are re-run once, on a fresh copy of the agent's tree: tests that pass then are flaky.
          checkCancelled()
          const rerunDir = path.join(tmp, 'rerun')
          await fs.promises.mkdir(rerunDir)
          await materializeTree(
            workspace.gitDir,
            report.diff.resultTree ?? workspace.tree,
            rerunDir
          )
          // The build output the diff left out (e.g. node_modules) goes along.
          carryEntries(workspace.dir, rerunDir, ignoredPaths)
          if (process.getuid?.() === 0) await chownTree(rerunDir, ...containerIds(plan))
          const rerun = await runPhase(
            plan,
            testsPhase,
            image,
            rerunDir,
            taskFile,
            secrets,
            deps,
            OUTPUT_FILES.rerunLog,
            { nameSuffix: '-rerun', onServices: recordServices }
          )
          const again = await collectTestReports(rerunDir, plan.capture.testReports)
          const flaky = markFlaky(results.cases, again.cases)
          report.tests.rerun = { phase: rerun.report, flaky }
          rerunPassed =
            rerun.result.exitCode === 0 && results.cases.every((c) => c.status !== 'failed')
          if (flaky.length > 0)
            log.warn(`flaky (failed, then passed on the re-run): ${flaky.length}`)
        }
        report.tests.cases = results.cases
        report.tests.summary = summarize(results.cases)
        report.tests.sources = results.sources
        if (report.tests.baseline)
          report.tests.comparison = compareTests(report.tests.baseline.cases, results.cases)
        if (tests.result.cancelled) throw new CancelledError('signal')
        if (tests.result.error !== undefined) {
          setOutcome('infrastructure-error', `the tests container failed: ${tests.result.error}`)
        } else if (tests.result.timedOut) {
          setOutcome('timed-out', 'the tests ran past timeout-minutes')
        } else if (
          (tests.result.exitCode !== 0 && !rerunPassed) ||
          report.tests.summary.failed > 0
        ) {
          setOutcome(
            'tests-failed',
            `the tests failed (exit ${tests.result.exitCode}, ${report.tests.summary.failed} failed)`
          )
        } else {
          setOutcome(
            'success',
            report.tests.rerun
              ? `the agent finished and the tests pass on the re-run (flaky: ${report.tests.rerun.flaky.length})`
              : 'the agent finished and the tests pass'
          )
        }
      } else {
        setOutcome('success', 'the agent finished (no test-command configured)')
      }
    }
    if (
      report.policy.violations.length > 0 &&
      (report.outcome === 'success' || report.outcome === 'tests-failed')
    ) {
      setOutcome(
        'policy-violation',
        `${report.policy.violations.length} policy violation(s): ${[...new Set(report.policy.violations.map((v) => v.rule))].join(', ')} (was: ${report.outcome})`
      )
    }
  } catch (caught) {
    if (caught instanceof SetupFailed) {
      setOutcome('infrastructure-error', caught.message)
    } else if (caught instanceof UnpinnedBaseError) {
      setOutcome('policy-violation', caught.message)
      report.policy.violations.push(
        ...caught.bases.map((b) => ({
          rule: 'unpinned-base',
          path: null,
          detail: `FROM ${b.ref} (line ${b.line})`
        }))
      )
    } else if (caught instanceof CancelledError) {
      setOutcome('cancelled', caught.message)
      error = caught
    } else {
      setOutcome('infrastructure-error', errorMessage(caught))
      error = caught
      if (caught instanceof ConfigurationError)
        report.outcomeReason = `configuration: ${caught.message}`
    }
  } finally {
    report.finishedAt = new Date().toISOString()
    report.cost.wallMs = Date.now() - started
    const phases = [
      report.setup?.phase ?? null,
      report.tests.baseline?.phase ?? null,
      report.agent,
      report.tests.phase,
      report.tests.rerun?.phase ?? null
    ].filter((p): p is PhaseReport => p !== null)
    const cpu = phases.map((p) => p.cpuSeconds).filter((c): c is number => c !== null)
    report.cost.cpuSeconds = cpu.length > 0 ? cpu.reduce((a, b) => a + b, 0) : null
    const mem = phases.map((p) => p.peakMemoryBytes).filter((m): m is number => m !== null)
    report.cost.peakMemoryBytes = mem.length > 0 ? Math.max(...mem) : null
    await writeOutputs(out, report, redactor).catch((e: unknown) =>
      log.error(`could not write the report: ${errorMessage(e)}`)
    )
    await sandbox.cleanup(plan.runId).catch((e: unknown) => log.warn(`cleanup: ${errorMessage(e)}`))
    await fs.promises.rm(tmp, { recursive: true, force: true }).catch(() => undefined)
  }
  return {
    report,
    reportPath: path.join(out, OUTPUT_FILES.report),
    diffSha256: report.diff.sha256,
    ...(error !== undefined ? { error } : {})
  }
}

async function runPhase(
  plan: RunPlan,
  phase: PhasePlan,
  image: ImageInfo,
  workspaceDir: string,
  taskFile: string,
  secrets: RunSecrets,
  deps: PipelineDeps,
  logName: string,
  extra: PhaseExtra = {}
): Promise<{ result: PhaseResult; report: PhaseReport }> {
  return deps.log.group(phase.name, async () => {
    // The test-command phases get fresh service containers of their own.
    let services: ServicesSession | undefined
    if (plan.services.length > 0 && (phase.name === 'tests' || phase.name === 'baseline')) {
      services = await startServices(deps.docker, {
        runId: plan.runId,
        phase: `${phase.name}${extra.nameSuffix ?? ''}`,
        labels: plan.labels,
        runtime: plan.sandbox.runtime,
        limits: plan.sandbox,
        services: plan.services,
        ...(deps.signal ? { signal: deps.signal } : {})
      }).catch((error: unknown) => {
        const partial = (error as { serviceReports?: ServiceReport[] }).serviceReports ?? []
        extra.onServices?.(partial)
        throw error
      })
      extra.onServices?.(services.reports)
      deps.log.info(
        `services up for ${phase.name}: ${services.reports.map((r) => `${r.name} (ready in ${r.readyMs} ms)`).join(', ')}`
      )
    }
    try {
      return await runPhaseIn(plan, phase, image, workspaceDir, taskFile, secrets, deps, logName, {
        ...extra,
        ...(services ? { services: { network: services.network } } : {})
      })
    } finally {
      await services?.stop()
    }
  })
}

async function runPhaseIn(
  plan: RunPlan,
  phase: PhasePlan,
  image: ImageInfo,
  workspaceDir: string,
  taskFile: string,
  secrets: RunSecrets,
  deps: PipelineDeps,
  logName: string,
  extra: PhaseExtra & { services?: { network: string } }
): Promise<{ result: PhaseResult; report: PhaseReport }> {
  {
    const logFile = path.join(plan.outputDir, logName)
    const capped = new CappedLog(
      logFile,
      plan.capture.maxLogBytes,
      (line) => deps.log.output(phase.name, line),
      new StreamRedactor([...secrets.env.map((e) => e.value), ...(secrets.secrets ?? [])])
    )
    const spec = containerSpec(plan, phase, {
      ...(extra.services ? { services: extra.services } : {}),
      imageId: image.id,
      workspaceDir,
      taskFile,
      env: secrets.env,
      ...(extra.outDir !== undefined ? { outDir: extra.outDir } : {}),
      ...(extra.egress ? { egress: { network: extra.egress.network, env: extra.egress.env } } : {})
    })
    if (extra.nameSuffix !== undefined) spec.name = `${spec.name}${extra.nameSuffix}`
    const result = await deps.sandbox.runPhase(spec, {
      timeoutMs: phase.timeoutMs,
      graceMs: phase.graceMs,
      stdout: capped,
      stderr: capped,
      ...(deps.signal ? { signal: deps.signal } : {})
    })
    await capped.finish()
    const report: PhaseReport = {
      ...emptyPhase(phase.command[2] ?? phase.command.join(' ')),
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      oomKilled: result.oomKilled,
      cancelled: result.cancelled,
      durationMs: result.durationMs,
      cpuSeconds: result.cpuSeconds ?? null,
      peakMemoryBytes: result.peakMemoryBytes ?? null,
      logBytes: capped.bytesTotal,
      logTruncated: capped.truncated,
      ...(result.error !== undefined ? { error: result.error } : {})
    }
    const status = result.timedOut
      ? 'timed out'
      : result.cancelled
        ? 'cancelled'
        : result.oomKilled
          ? 'killed: out of memory'
          : result.error !== undefined
            ? `failed: ${result.error}`
            : `exit code ${result.exitCode}`
    deps.log.info(`${phase.name}: ${status} after ${(result.durationMs / 1000).toFixed(1)} s`)
    return { result, report }
  }
}

interface PhaseExtra {
  outDir?: string
  nameSuffix?: string
  egress?: EgressSession
  /** Receives the reports of the phase's service containers (also when they fail to start). */
  onServices?: (reports: ServiceReport[]) => void
}

/** Starts the egress proxy when the plan says allowlist (before the agent, which needs it). */
async function startEgressFor(
  plan: RunPlan,
  secrets: RunSecrets,
  deps: PipelineDeps
): Promise<EgressSession | undefined> {
  const e = plan.egress
  if (!e) return undefined
  if (!secrets.egress) throw new Error('allowlist plan without its egress settings')
  const settings = secrets.egress
  return deps.log.group('egress', async () => {
    const session = await startEgress(deps.docker, {
      runId: plan.runId,
      labels: plan.labels,
      proxyImage: e.proxyImage,
      proxyScript: deps.proxyScript ?? defaultProxyScript(),
      allow: e.allowHosts,
      hostMap: e.hostMap,
      credentials: settings.credentials,
      ...(settings.upstreamCa !== undefined ? { extraCa: settings.upstreamCa } : {}),
      ...(e.proxyNetwork !== null ? { upstreamNetwork: e.proxyNetwork } : {})
    })
    deps.log.info(
      `egress proxy up: ${e.allowHosts.length} allowed host rule(s), ${e.credentials.length} credential route(s)`
    )
    return session
  })
}

/** Stops the proxy, writes egress.jsonl / transcript.jsonl, and fills the report's summary. */
async function stopEgress(
  session: EgressSession,
  report: Report,
  secrets: RunSecrets,
  out: string,
  deps: PipelineDeps
): Promise<void> {
  const capture = await session.stop()
  const secretValues = (secrets.egress?.credentials ?? []).map((c) => c.secret)
  await writeEgressEvidence(out, capture.events, capture.transcript, secretValues)
  report.egress = summarizeEgress(capture.events, capture.transcript, capture.overflow)
  const t = report.egress.transcript
  if (t) {
    // Counted by the proxy: measured, so it takes the place of what usage.json claimed.
    report.cost.tokens = {
      model: t.models.length > 0 ? t.models.join(', ') : null,
      input: t.tokens.input,
      output: t.tokens.output,
      cacheRead: null,
      cacheWrite: null
    }
    if (report.agent.model === null && t.models.length > 0) report.agent.model = t.models.join(', ')
  }
  deps.log.info(
    `egress: ${report.egress.allowed} allowed, ${report.egress.denied} denied` +
      (report.egress.deniedHosts.length > 0
        ? ` (denied: ${report.egress.deniedHosts.join(', ')})`
        : '')
  )
}

async function prepareOutputDir(out: string): Promise<void> {
  await fs.promises.mkdir(path.join(out, 'logs'), { recursive: true })
  for (const f of Object.values(OUTPUT_FILES))
    await fs.promises.rm(path.join(out, f), { force: true })
}

/** The numeric uid and gid the containers run as. */
function containerIds(plan: RunPlan): [number, number] {
  const [uid, gid] = plan.sandbox.user.split(':').map(Number)
  return [uid, gid ?? uid]
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

function initialReport(plan: RunPlan, started: number): Report {
  const s = plan.sandbox
  const agent = plan.phases.find((p) => p.name === 'agent') as PhasePlan
  const tests = plan.phases.find((p) => p.name === 'tests')
  return {
    schemaVersion: 1,
    runId: plan.runId,
    outcome: 'infrastructure-error',
    outcomeReason: 'the run did not finish',
    startedAt: new Date(started).toISOString(),
    finishedAt: new Date(started).toISOString(),
    repo: { path: plan.repo.path, ref: plan.repo.ref, baseSha: null, headSha: null },
    image: {
      ref: null,
      id: null,
      baseDigests: [],
      dockerfileSha256: null,
      cached: false,
      warnings: []
    },
    task: { sha256: plan.task.sha256, bytes: plan.task.bytes, source: plan.task.source },
    agent: {
      ...emptyPhase(agent.command[2] ?? ''),
      promptSha256: plan.task.sha256,
      model: plan.model ?? null
    },
    tests: {
      command: tests?.command[2] ?? null,
      phase: null,
      summary: { total: 0, passed: 0, failed: 0, skipped: 0 },
      cases: [],
      sources: [],
      baseline: null,
      comparison: null,
      rerun: null
    },
    sandbox: {
      runtime: s.runtime,
      network: s.network,
      user: s.user,
      readOnlyRootfs: s.readOnlyRootfs,
      capDrop: [...s.capDrop],
      noNewPrivileges: s.noNewPrivileges,
      init: s.init,
      memory: s.memoryBytes,
      cpus: s.cpus,
      pidsLimit: s.pidsLimit,
      source: 'plan',
      applied: null
    },
    diff: {
      sha256: null,
      bytes: 0,
      files: [],
      totalFiles: 0,
      filesInPatch: 0,
      truncated: false,
      truncation: [],
      redacted: false,
      skipped: [],
      ignored: { total: 0, entries: [] },
      baseTree: null,
      resultTree: null
    },
    policy: {
      allowedPaths: plan.policy.allowedPaths,
      protectedPaths: plan.policy.protectedPaths,
      violations: [],
      protected: [],
      source: plan.policyFile
    },
    dependencies: [],
    runner: null,
    cost: {
      wallMs: 0,
      cpuSeconds: null,
      peakMemoryBytes: null,
      tokens: null,
      usd: null,
      usageFile: { status: 'missing' }
    },
    egress: { allowed: 0, denied: 0, deniedHosts: [], transcript: null },
    env: plan.env
  }
}

/** The install phase did not succeed: nothing after it runs (the evidence so far is written). */
class SetupFailed extends Error {}

/**
 * Marks the tests that failed in the first run and passed in the re-run as flaky (and passed);
 * returns their ids.
 */
export function markFlaky(first: TestCase[], rerun: TestCase[]): string[] {
  const again = new Map(rerun.map((c) => [c.id, c.status]))
  const flaky: string[] = []
  for (const c of first) {
    if (c.status === 'failed' && again.get(c.id) === 'passed') {
      c.status = 'passed'
      c.flaky = true
      flaky.push(c.id)
    }
  }
  return flaky
}

/** A logger that masks secret values in every message (phase output is masked at the source). */
function redactingLogger(log: Logger, redactor: Redactor): Logger {
  if (redactor.empty) return log
  return {
    group: (name, fn) => log.group(name, fn),
    info: (m) => log.info(redactor.redact(m)),
    warn: (m) => log.warn(redactor.redact(m)),
    error: (m) => log.error(redactor.redact(m)),
    output: (phase, line) => log.output(phase, redactor.redact(line))
  }
}
