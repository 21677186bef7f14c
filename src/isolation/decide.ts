// The run-time half of the isolation decision: facts from the plan, the source repository and
// the daemon (kept apart from the pure model, which the inputs use).
import type { RunPlan } from '../plan.js'
import { resolveCommit } from '../workspace/workspace.js'
import { dependencyChanges, resolveIsolation } from './isolation.js'
import type { DaemonRuntimes, IsolationDecision } from './isolation.js'

/** The run's tier from its plan and the daemon's runtimes (before any container starts). */
export async function decideIsolation(
  plan: RunPlan,
  docker: { info(): Promise<unknown> }
): Promise<IsolationDecision> {
  const req = plan.isolation
  if (req === null) throw new Error('decideIsolation without isolation in the plan')
  const base = plan.policyFile.commit
  let changes: string[] | null = null
  if (base !== null) {
    const head = await resolveCommit(plan.repo.path, plan.repo.ref)
    changes = await dependencyChanges(plan.repo.path, base, head)
  }
  const info = (await docker.info()) as { Runtimes?: DaemonRuntimes }
  const setupHosts = plan.setup?.allowHosts.length ?? 0
  return resolveIsolation(
    req,
    {
      fork: req.fork,
      network: plan.sandbox.network,
      credentials: plan.egress?.credentials.length ?? 0,
      setup: plan.setup !== undefined,
      dependencyChanges: changes,
      needsNetwork:
        plan.sandbox.network === 'allowlist' || setupHosts > 0 || plan.services.length > 0
    },
    info.Runtimes ?? {}
  )
}
