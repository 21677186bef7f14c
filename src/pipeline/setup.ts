// The install phase as a pipeline stage: the setup module's phase on the pipeline's phase runner.
import { baseIgnoreRules } from '../evidence/ignore.js'
import { defaultProxyScript } from '../egress/session.js'
import type { Logger } from '../log.js'
import type { PhasePlan } from '../plan.js'
import { OUTPUT_FILES } from '../report/output.js'
import type { SetupReport } from '../report/report.js'
import type { Runtime } from '../sandbox/types.js'
import { describeAllowHosts, runSetup } from '../setup/setup.js'
import { diffTrees } from '../evidence/diff.js'
import { mergeHashes } from '../evidence/lockfiles.js'
import { snapshotWorkspace } from '../evidence/snapshot.js'
import type { Workspace } from '../workspace/workspace.js'
import { runPhase } from './phase.js'
import type { PhaseContext } from './phase.js'
import { CancelledError, ConfigurationError } from '../errors.js'
import { CACHE_ENV, CACHE_MOUNT, openDepsCache } from '../cache/caches.js'
import type { OpenDepsCache } from '../cache/caches.js'
import type { CacheStore } from '../cache/store.js'
import { hashLockfiles } from '../evidence/metadata.js'
import { readResolvedTrees } from '../evidence/resolved.js'
import { ownForSandbox } from './phase.js'
import * as path from 'node:path'
import type { Scratch } from '../workspace/bounded.js'

/** How many files the install changed are listed by name (the rest are counted). */
const MAX_CHANGED_LISTED = 100

/** The install phase did not succeed: nothing after it runs (the evidence so far is written). */
export class SetupFailed extends Error {}

/**
 * Why the install failed, in the user's terms: when its proxy refused hosts for a reason a setting
 * decides, a configuration error of that setting quoting each refusal and its fix (the package
 * manager's own words, such as npm's "E403 forbidden by your security policy", mislead); else the
 * failure with its log.
 */
export function setupFailure(why: string, record: SetupReport): SetupFailed | ConfigurationError {
  const denials = (record.egress?.denials ?? []).filter((d) => d.input !== null)
  const logs = `see ${OUTPUT_FILES.setupLog} and ${OUTPUT_FILES.setupEgress}`
  if (denials.length === 0)
    return new SetupFailed(`the setup command failed (${why}); see ${OUTPUT_FILES.setupLog}`)
  const quoted = denials.map((d) => `${d.host} ${d.fix}`).join('; ')
  return new SettingsAdvice(
    denials[0].input as string,
    `the setup command failed (${why}) after its proxy refused ${denials.length} host(s): ${quoted}; ${logs}`
  )
}

/**
 * A configuration error that is advice to set a setting (`host-map`, `setup-allow-hosts`), not a
 * complaint about its value: its message starts with what failed, never with the setting's name
 * (`error: host-map: …` reads as if the flag given were wrong). `input` still names the setting.
 */
export class SettingsAdvice extends ConfigurationError {
  constructor(input: string, message: string) {
    super(input, message)
    this.message = this.message.slice(input.length + 2)
  }
}

/**
 * What the install stage returns: its record, whether it filled the scratch filesystem, and why
 * nothing after it may run (a cancellation or a failed install), if so.
 */
export interface InstallRecord {
  setup: SetupReport
  filledScratch: boolean
  stop?: CancelledError | SetupFailed | ConfigurationError
  /**
   * What the install left outside the tree (raw paths of the entries the ignore rules leave out,
   * e.g. `node_modules`): kept aside so the tests get exactly this plus the agent's diff.
   */
  output: Buffer[]
}

export async function runInstallPhase(
  ctx: PhaseContext,
  phase: PhasePlan,
  ws: Workspace,
  deps: {
    runtime: Runtime
    log: Logger
    proxyScript?: string
    /** The dependency cache's store and the fixed folder it stages entries in. */
    cache?: { store: CacheStore; dir: string }
    /** The run's bounded scratch filesystem: the cache the install writes lives on it. */
    scratch: Scratch
    /** What the install depends on besides the lockfiles: the image's build key or id. */
    imageKey: string
  }
): Promise<InstallRecord> {
  let cache: OpenDepsCache | undefined
  if (ctx.plan.cache.dependencies && deps.cache) {
    cache = await openDepsCache(
      deps.cache.store,
      ctx.plan.cache.scope,
      {
        work: path.join(deps.scratch.dir, 'deps-cache'),
        staging: path.join(deps.cache.dir, 'deps')
      },
      {
        lockfiles: await hashLockfiles(ws.gitDir, ws.startTree, ws.dir),
        command: phase.command.join('\0'),
        image: deps.imageKey,
        network: [
          ...describeAllowHosts(ctx.plan.setup),
          ...(ctx.plan.setup?.proxy?.hostMap ?? []).map((m) => `map ${JSON.stringify(m)}`)
        ]
      },
      { info: (l) => deps.log.info(l), warn: (l) => deps.log.warn(l) }
    )
    await ownForSandbox(ctx.plan, cache.dir)
  }
  const setupPlan = ctx.plan.phases.find((p) => p.name === 'setup')
  const before = await hashLockfiles(ws.gitDir, ws.startTree, ws.dir)
  const planned = ctx.plan.setup
  if (!planned) throw new Error('an install phase without its setup plan')
  const run = { runId: ctx.plan.runId, labels: ctx.plan.labels, setup: planned }
  const { ran, egress } = await runSetup(
    { ...run, allowlist: phase.network === 'allowlist' },
    {
      runtime: deps.runtime,
      proxyScript: deps.proxyScript ?? defaultProxyScript(),
      info: (l) => deps.log.info(l),
      egressFile: path.join(ctx.plan.outputDir, OUTPUT_FILES.setupEgress),
      // No `env` values: the install gets no secrets of the run.
      runPhase: (session) =>
        runPhase({ ...ctx, env: [] }, phase, ws.dir, OUTPUT_FILES.setupLog, {
          ...(session ? { egress: { network: session.network, env: session.env } } : {}),
          ...(cache ? { cache: { dir: cache.dir, target: CACHE_MOUNT, env: CACHE_ENV } } : {})
        })
    }
  ).catch(async (error: unknown) => {
    await cache?.close(false)
    throw error
  })
  const after = await hashLockfiles(ws.gitDir, ws.startTree, ws.dir)
  // What the install resolved, from what it left (the evidence when no lockfile is committed).
  const resolved = await readResolvedTrees(ws.dir)
  // Which tracked files the install changed: its build output is ignored, as in the diff.
  const rules = await baseIgnoreRules(ws.gitDir, ws.startTree)
  const snap = await snapshotWorkspace(ws.dir, ws.gitDir, undefined, ws.startTree, rules, ws.stats)
  const changed = await diffTrees(ws.gitDir, ws.startTree, snap.tree, {
    maxChangedFiles: MAX_CHANGED_LISTED,
    maxDiffBytes: 0
  })
  const setup = {
    result: ran.result,
    report: {
      command: setupPlan?.command[2] ?? phase.command.join(' '),
      phase: ran.report,
      presets: ctx.plan.setup?.presets ?? [],
      allowHosts: describeAllowHosts(ctx.plan.setup),
      egress,
      lockfiles: mergeHashes(before, after),
      resolved,
      changedFiles: changed.files.map((f) => f.path),
      changedTotal: changed.totalFiles
    } satisfies SetupReport
  }
  // Before the cache is closed (which removes its folder): did the install fill the limit?
  const filledScratch = await deps.scratch.full()
  const r = setup.result
  const ok = r.error === undefined && !r.timedOut && !r.oomKilled && r.exitCode === 0
  const record: SetupReport = cache
    ? { ...setup.report, cache: await cache.close(ok && !r.cancelled) }
    : setup.report
  const output = snap.ignoredRaw
  if (r.cancelled)
    return { setup: record, filledScratch, output, stop: new CancelledError('signal') }
  if (!ok) {
    const why =
      r.error ?? (r.timedOut ? 'timed out' : r.oomKilled ? 'out of memory' : `exit ${r.exitCode}`)
    return { setup: record, filledScratch, output, stop: setupFailure(why, record) }
  }
  return { setup: record, filledScratch, output }
}
