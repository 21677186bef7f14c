// The run-time half of the isolation decision: facts from the plan, the source repository and the
// runtime (the pure model is in src/isolation/isolation.ts).
import type { RunPlan } from '../plan.js'
import type { Runtime } from '../sandbox/types.js'
import { git } from '../workspace/git.js'
import { resolveCommit } from '../workspace/workspace.js'
import { DEPENDENCY_FILES, resolveIsolation } from '../isolation/isolation.js'
import type { IsolationDecision } from '../isolation/isolation.js'

/** The dependency-related files that differ between two commits of the source repository. */
export async function dependencyChanges(
  repoPath: string,
  base: string,
  head: string
): Promise<string[]> {
  const out = await git(
    ['diff-tree', '-r', '--no-renames', '--name-only', '-z', '--end-of-options', base, head],
    { cwd: repoPath }
  )
  return out.stdout
    .toString('utf8')
    .split('\0')
    .filter((p) => p !== '' && DEPENDENCY_FILES(p))
}

/** The run's tier from its plan and the engine's runtimes (before any container starts). */
export async function decideIsolation(plan: RunPlan, runtime: Runtime): Promise<IsolationDecision> {
  const req = plan.isolation
  if (req === null) throw new Error('decideIsolation without isolation in the plan')
  const base = plan.policyFile.commit
  let changes: string[] | null = null
  if (base !== null) {
    const head = await resolveCommit(plan.repo.path, plan.repo.ref)
    changes = await dependencyChanges(plan.repo.path, base, head)
  }
  const runtimes = (await runtime.ociRuntimes?.()) ?? {}
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
    runtimes
  )
}
