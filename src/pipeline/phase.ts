// One sandbox phase as the pipeline sees it: its log captured (capped, masked), its container
// from the plan, the result in the report's terms.
import * as fs from 'node:fs'
import * as path from 'node:path'
import { CappedLog } from '../evidence/logs.js'
import { StreamRedactor } from '../redact.js'
import type { Logger } from '../log.js'
import type { PhasePlan, RunPlan } from '../plan.js'
import { emptyPhase } from '../report/report.js'
import type { PhaseReport } from '../report/report.js'
import { containerSpec } from '../sandbox/spec.js'
import type { PhaseResources } from '../sandbox/spec.js'
import type { PhaseResult, Runtime } from '../sandbox/types.js'
import { chownTree, materializeTree } from '../workspace/workspace.js'
import { startServices } from '../services/services.js'
import type { ServiceReport, ServicesSession } from '../services/services.js'

export interface PhaseContext {
  plan: RunPlan
  runtime: Runtime
  log: Logger
  imageId: string
  taskFile: string
  env: { name: string; value: string }[]
  secretValues: string[]
  signal?: AbortSignal
}

export interface PhaseRun {
  result: PhaseResult
  report: PhaseReport
  /** The phase's service containers (the test-command phases'; none for the others). */
  services: ServiceReport[]
}

/** The reports of the service containers a failed start left (carried by its error). */
export function servicesOf(error: unknown): ServiceReport[] {
  const reports = (error as { serviceReports?: unknown } | null)?.serviceReports
  return Array.isArray(reports) ? (reports as ServiceReport[]) : []
}

export async function runPhase(
  ctx: PhaseContext,
  phase: PhasePlan,
  workspaceDir: string,
  logName: string,
  extra: Pick<PhaseResources, 'outDir' | 'egress' | 'cache'> & { nameSuffix?: string } = {}
): Promise<PhaseRun> {
  const { plan, log } = ctx
  return log.group(phase.name, async () => {
    // The test-command phases get fresh service containers of their own.
    let services: ServicesSession | undefined
    if (plan.services.length > 0 && (phase.name === 'tests' || phase.name === 'baseline')) {
      services = await startServices(ctx.runtime, {
        runId: plan.runId,
        phase: `${phase.name}${extra.nameSuffix ?? ''}`,
        labels: plan.labels,
        runtime: plan.sandbox.runtime,
        limits: plan.sandbox,
        services: plan.services,
        log: (line) => log.info(line),
        ...(ctx.signal ? { signal: ctx.signal } : {})
      })
      log.info(
        `services up for ${phase.name}: ${services.reports.map((r) => `${r.name} (ready in ${r.readyMs} ms)`).join(', ')}`
      )
    }
    try {
      const run = await runIn(ctx, phase, workspaceDir, logName, {
        ...extra,
        ...(services ? { services: { network: services.network } } : {})
      })
      return { ...run, services: services?.reports ?? [] }
    } finally {
      await services?.stop()
    }
  })
}

async function runIn(
  ctx: PhaseContext,
  phase: PhasePlan,
  workspaceDir: string,
  logName: string,
  extra: Pick<PhaseResources, 'outDir' | 'egress' | 'services' | 'cache'> & {
    nameSuffix?: string
  }
): Promise<Omit<PhaseRun, 'services'>> {
  const { plan, log } = ctx
  {
    const capped = new CappedLog(
      path.join(plan.outputDir, logName),
      plan.capture.maxLogBytes,
      (line) => log.output(phase.name, line),
      new StreamRedactor(ctx.secretValues)
    )
    const spec = containerSpec(plan, phase, {
      imageId: ctx.imageId,
      workspaceDir,
      taskFile: ctx.taskFile,
      env: ctx.env,
      ...(extra.outDir !== undefined ? { outDir: extra.outDir } : {}),
      ...(extra.egress ? { egress: extra.egress } : {}),
      ...(extra.cache ? { cache: extra.cache } : {}),
      ...(extra.services ? { services: extra.services } : {})
    })
    if (extra.nameSuffix !== undefined) spec.name = `${spec.name}${extra.nameSuffix}`
    // The one re-run of failing tests says so: a test suite may print more, or wait longer.
    if (extra.nameSuffix === '-rerun') spec.env = [...spec.env, 'AIRLOCK_RERUN=1']
    const result = await ctx.runtime.runPhase(spec, {
      timeoutMs: phase.timeoutMs,
      graceMs: phase.graceMs,
      stdout: capped,
      stderr: capped,
      ...(ctx.signal ? { signal: ctx.signal } : {})
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
    log.info(`${phase.name}: ${describe(result)} after ${(result.durationMs / 1000).toFixed(1)} s`)
    return { result, report }
  }
}

function describe(result: PhaseResult): string {
  if (result.timedOut) return 'timed out'
  if (result.cancelled) return 'cancelled'
  if (result.oomKilled) return 'killed: out of memory'
  if (result.error !== undefined) return `failed: ${result.error}`
  return `exit code ${result.exitCode}`
}

/**
 * A folder for a container, owned by the sandbox user when we are root (the containers never run
 * as root); with `tree`, a fresh copy of that git tree.
 */
export async function sandboxFolder(
  plan: RunPlan,
  dir: string,
  tree?: { gitDir: string; tree: string }
): Promise<string> {
  await fs.promises.mkdir(dir, { recursive: true })
  if (tree) await materializeTree(tree.gitDir, tree.tree, dir, ownership(plan))
  else await ownForSandbox(plan, dir)
  return dir
}

/**
 * Files written for a container go to the sandbox user when we are root (the workspace gets its
 * owner as it is written, so its stat record is taken after the chown).
 */
export function ownership(plan: RunPlan): { owner?: { uid: number; gid: number } } {
  if (process.getuid?.() !== 0) return {}
  const [uid, gid] = plan.sandbox.user.split(':').map(Number)
  return { owner: { uid, gid: gid ?? uid } }
}

export async function ownForSandbox(plan: RunPlan, dir: string): Promise<void> {
  const { owner } = ownership(plan)
  if (owner) await chownTree(dir, owner.uid, owner.gid)
}
