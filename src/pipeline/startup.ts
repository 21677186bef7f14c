// The start of a run: the engine's facts and the plan resolved, the agent image, the workspace (on
// its scratch filesystem) and the egress proxy. They do not depend on each other: they are made at
// the same time, and the run waits for all of them. Each step's record is kept as it arrives, so
// a start that fails part-way still leaves what the others learned (and releases what they made).
import type { Runner } from '../runner.js'
import * as path from 'node:path'
import type { CacheStore } from '../cache/store.js'
import { runnerFacts } from '../evidence/metadata.js'
import type { Logger } from '../log.js'
import type { RunPlan, RunSecrets } from '../plan.js'
import type { RunSteps } from '../report/report.js'
import type { Runtime } from '../sandbox/types.js'
import { makeScratch } from '../workspace/bounded.js'
import type { Scratch, ToolEnv } from '../workspace/bounded.js'
import { prepareWorkspace } from '../workspace/workspace.js'
import type { Workspace } from '../workspace/workspace.js'
import { alongside, timed } from './alongside.js'
import type { RunRecords } from './assemble.js'
import type { EgressScope } from './egress.js'
import { resolveRunImage } from './image.js'
import type { RunImage, VerifyImage } from './image.js'
import { ownership } from './phase.js'
import type { PhaseContext } from './phase.js'
import { isResolved, resolvePlan } from './resolve.js'
import type { ResolvedPlan } from './resolve.js'

export interface Started {
  /** What every phase of the run shares; `ctx.plan` is the resolved plan. */
  ctx: PhaseContext & { plan: ResolvedPlan }
  image: RunImage
  scratch: Scratch
  ws: Workspace
}

export interface StartDeps {
  runtime: Runtime
  log: Logger
  /** The run's temporary folder. */
  tmp: string
  cache: { store: CacheStore; dir: string } | undefined
  signal?: AbortSignal
  egress: EgressScope
  /** Every secret value of the run (masked in the phases' logs). */
  secretValues: string[]
  verifyImage?: VerifyImage
  /** The runner's facts (report.json's runner.github); none off a runner. */
  runner?: Runner
  /** The host's environment for the scratch filesystem's tools (mkfs, mount, sudo). */
  toolEnv: ToolEnv
}

/** The four start steps at once; their records into `records` as each arrives. */
export async function startRun(
  plan: RunPlan,
  secrets: RunSecrets,
  deps: StartDeps,
  records: RunRecords
): Promise<Started> {
  const { runtime, tmp, cache, signal } = deps
  const step =
    (name: keyof RunSteps) =>
    (ms: number): void => {
      records.steps[name] = ms
    }
  const [resolved, image, { scratch, ws }] = await alongside(deps.log, 1, [
    (l) => timed(() => resolveStep(plan, runtime, l, records, deps.runner), step('resolveMs')),
    (l) =>
      timed(
        () => resolveRunImage(plan, runtime, l, cache, signal, deps.verifyImage),
        step('imageMs')
      ).then((image) => (records.image = image)),
    async (l) => {
      const scratch = await timed(
        () => makeScratch(tmp, plan.sandbox.workspace, (line) => l.warn(line), deps.toolEnv),
        step('scratchMs')
      )
      records.scratch = scratch
      const ws = await timed(
        () => workspaceStep(plan, secrets, scratch, tmp, l),
        step('workspaceMs')
      )
      records.workspace = ws
      return { scratch, ws }
    },
    async (l) => {
      const ms = await deps.egress.open(l)
      if (ms !== undefined) step('proxyStartMs')(ms)
    }
  ])
  for (const w of image.warnings) deps.log.warn(w)
  const ctx = {
    plan: resolved,
    runtime,
    log: deps.log,
    imageId: image.id,
    taskFile: path.join(tmp, 'task.md'),
    env: secrets.env,
    secretValues: deps.secretValues,
    ...(signal ? { signal } : {})
  }
  return { ctx, image, scratch, ws }
}

/** The plan resolved (unless the caller resolved it), the engine's facts, what was decided. */
async function resolveStep(
  plan: RunPlan,
  runtime: Runtime,
  log: Logger,
  records: RunRecords,
  runner: Runner | undefined
): Promise<ResolvedPlan> {
  const r = isResolved(plan) ? plan : await resolvePlan(plan, runtime)
  const { isolation, note } = r.resolution
  if (isolation !== null) log.info(`isolation: ${isolation.tier} (${isolation.reasons.join('; ')})`)
  else if (note !== null) log.info(`runtime: ${r.sandbox.runtime} (${note})`)
  records.resolved = r
  records.runner = runnerFacts(r.resolution.engine, r.sandbox.runtime, runner?.github ?? null)
  return r
}

/** The private copy of the ref, on the scratch filesystem (the earlier run's patch carried). */
async function workspaceStep(
  plan: RunPlan,
  secrets: RunSecrets,
  scratch: Scratch,
  tmp: string,
  log: Logger
): Promise<Workspace> {
  return log.group('workspace', async () => {
    const prepared = await prepareWorkspace(
      plan.repo.path,
      plan.repo.ref,
      tmp,
      path.join(scratch.dir, 'workspace'),
      { ...ownership(plan), ...(secrets.carry !== undefined ? { carry: secrets.carry } : {}) }
    )
    log.info(`workspace: ${plan.repo.ref} at ${prepared.commit}`)
    if (plan.continuation !== undefined)
      log.info(`continues run ${plan.continuation.runId}: ${plan.continuation.note}`)
    return prepared
  })
}
