// The resolve step: the pure plan completed with the engine's facts before anything runs — the
// isolation tier and the runtime entry that serves it, checked on the engine. `airlock plan`
// prints what this returns and the run uses the same, so the plan printed is the plan that runs.
import { GVISOR_NETWORK_RUNTIME } from '../isolation/isolation.js'
import type { IsolationDecision } from '../isolation/isolation.js'
import type { RunPlan } from '../plan.js'
import type { EngineFacts, Runtime } from '../sandbox/types.js'
import { decideIsolation, servingRuntime } from './isolation-facts.js'

/** What the engine decided about a plan. */
export interface Resolution {
  /** The OCI runtime every container of the run uses (the tier's, or the one named). */
  runtime: string
  /** With `isolation`: the requested tier, the one chosen and why. */
  isolation: IsolationDecision | null
  /** Why a runtime named directly is served by another entry (gVisor's network entry), if so. */
  note: string | null
  /** What the engine says about itself. */
  engine: EngineFacts
}

/** A plan the engine has completed: `sandbox.runtime` is the runtime that will run. */
export type ResolvedPlan = RunPlan & { resolution: Resolution }

export function isResolved(plan: RunPlan): plan is ResolvedPlan {
  return 'resolution' in plan && (plan as ResolvedPlan).resolution !== undefined
}

/**
 * Decides the tier (from the run's risk, or as named) and checks the runtime on the engine; a
 * tier the daemon cannot provide fails closed (ConfigurationError), an engine that does not
 * answer is an InfrastructureError.
 */
export async function resolvePlan(plan: RunPlan, runtime: Runtime): Promise<ResolvedPlan> {
  const facts = runtime.engineFacts() // asked alongside the runtime check
  facts.catch(() => undefined)
  let chosen: { runtime: string; isolation: IsolationDecision | null; note: string | null }
  if (plan.isolation !== null && plan.isolation !== undefined) {
    const decision = await decideIsolation(plan, runtime)
    chosen = { runtime: decision.runtime, isolation: decision, note: null }
  } else {
    // A runtime named directly: gVisor without network support cannot serve a networked run.
    const served = await servingRuntime(plan, runtime)
    chosen = { runtime: served.runtime, isolation: null, note: served.note }
  }
  // gVisor's network entry serves the containers that need a network; those without one keep the
  // tier's own entry (registered with --network=none: no network stack at all).
  const asked = chosen.isolation?.tier ?? plan.sandbox.runtime
  const offline =
    chosen.runtime === GVISOR_NETWORK_RUNTIME && asked !== GVISOR_NETWORK_RUNTIME ? asked : null
  if (offline !== null) {
    const why = offlineReason(plan, offline)
    if (chosen.isolation !== null)
      chosen.isolation = { ...chosen.isolation, reasons: [...chosen.isolation.reasons, why] }
    else chosen.note = chosen.note === null ? why : `${chosen.note}; ${why}`
  }
  await Promise.all([
    runtime.preflight(chosen.runtime),
    ...(offline !== null ? [runtime.preflight(offline)] : [])
  ])
  return {
    ...plan,
    sandbox: {
      ...plan.sandbox,
      runtime: chosen.runtime,
      ...(offline !== null ? { offlineRuntime: offline } : {})
    },
    resolution: { ...chosen, engine: await facts }
  }
}

/** Which containers of the run need a network (and so run on runsc-net), and which do not. */
function offlineReason(plan: RunPlan, offline: string): string {
  const networked = [
    (plan.setup?.allowHosts.length ?? 0) > 0 ? 'the install' : null,
    plan.sandbox.network === 'allowlist' ? 'the agent' : null,
    plan.services.length > 0 ? 'the tests with their services' : null
  ].filter((x): x is string => x !== null)
  const offlinePhases = [
    plan.sandbox.network === 'allowlist' ? null : 'the agent',
    plan.services.length > 0 || !plan.phases.some((p) => p.name === 'tests') ? null : 'the tests'
  ].filter((x): x is string => x !== null)
  return `${networked.join(', ')} need${networked.length === 1 ? 's' : ''} a network: ${networked.length === 1 ? 'it runs' : 'they run'} on "${GVISOR_NETWORK_RUNTIME}"; the containers without a network${offlinePhases.length > 0 ? ` (${offlinePhases.join(', ')})` : ''} run on "${offline}", which has no network stack`
}

/** The plan as `airlock plan` prints it: resolved, or with what could not be decided and why. */
export function printablePlan(
  plan: RunPlan,
  resolved: ResolvedPlan | Undecided
): Record<string, unknown> {
  if ('resolution' in resolved) return resolved as unknown as Record<string, unknown>
  return { ...plan, resolution: { ...resolved } }
}

/** A plan the engine could not resolve: why, and the tier the run's risk would ask for. */
export interface Undecided {
  undecided: string
  planned?: { tier: string; reasons: string[] }
}
