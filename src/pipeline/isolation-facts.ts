// The run-time half of the isolation decision: facts from the plan, the source repository and the
// runtime (the pure model is in src/isolation/isolation.ts).
import type { RunPlan } from '../plan.js'
import type { Runtime } from '../sandbox/types.js'
import { GitError, git } from '../workspace/git.js'
import { resolveCommit } from '../workspace/workspace.js'
import {
  DEPENDENCY_FILES,
  STRONG_TIER,
  chooseTier,
  resolveIsolation,
  resolveRuntime
} from '../isolation/isolation.js'
import type { IsolationDecision, IsolationRequest, RiskFacts } from '../isolation/isolation.js'
import { splitNul } from '../git-listing.js'

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
  return splitNul(out.stdout)
    .map((p) => p.toString('utf8'))
    .filter((p) => p !== '' && DEPENDENCY_FILES(p))
}

/** A ref of the source repository as a commit, or null when it names none. */
async function commitOf(repoPath: string, ref: string): Promise<string | null> {
  try {
    const out = await git(['rev-parse', '-q', '--verify', '--end-of-options', `${ref}^{commit}`], {
      cwd: repoPath
    })
    return out.stdout.toString('utf8').trim()
  } catch (error) {
    if (error instanceof GitError) return null
    throw error
  }
}

/**
 * What a local run without a base compares `head` with: the merge base of `head` and the
 * repository's default branch (the remote's, `refs/remotes/origin/HEAD`, else a local `main` or
 * `master`), as a pull request would be compared; or why there is none.
 */
export async function defaultBranchBase(
  repoPath: string,
  head: string
): Promise<{ commit: string; against: string } | { why: string }> {
  let branch: { ref: string; against: string } | undefined
  try {
    const out = await git(['symbolic-ref', '-q', 'refs/remotes/origin/HEAD'], { cwd: repoPath })
    const ref = out.stdout.toString('utf8').trim()
    if (ref.startsWith('refs/remotes/') && (await commitOf(repoPath, ref)) !== null)
      branch = { ref, against: `${ref.slice('refs/remotes/'.length)} (origin/HEAD)` }
  } catch (error) {
    if (!(error instanceof GitError)) throw error
  }
  for (const name of ['main', 'master']) {
    if (branch !== undefined) break
    if ((await commitOf(repoPath, `refs/heads/${name}`)) !== null)
      branch = { ref: `refs/heads/${name}`, against: name }
  }
  if (branch === undefined)
    return {
      why: 'no --policy-base given, and the repository has no refs/remotes/origin/HEAD and no local main or master branch; give --policy-base BRANCH'
    }
  try {
    const out = await git(['merge-base', '--end-of-options', branch.ref, head], { cwd: repoPath })
    return { commit: out.stdout.toString('utf8').trim(), against: branch.against }
  } catch (error) {
    if (!(error instanceof GitError)) throw error
    return {
      why: `${head} has no common history with ${branch.against}; give --policy-base BRANCH`
    }
  }
}

/** What the tier depends on, from the plan and the source repository (git only, no engine). */
async function riskFacts(plan: RunPlan, req: IsolationRequest & { fork: boolean | null }) {
  const base = plan.policyFile.commit
  let changes: string[] | null = null
  let compared: { comparedWith: string } | { noBase: string } | Record<string, never> = {}
  if (base !== null) {
    const head = await resolveCommit(plan.repo.path, plan.repo.ref)
    changes = await dependencyChanges(plan.repo.path, base, head)
  } else if (req.compareWithDefaultBranch === true) {
    const head = await resolveCommit(plan.repo.path, plan.repo.ref)
    const found = await defaultBranchBase(plan.repo.path, head)
    if ('why' in found) compared = { noBase: found.why }
    else {
      changes = await dependencyChanges(plan.repo.path, found.commit, head)
      compared = { comparedWith: found.against }
    }
  }
  // A follow-up that carries the earlier run's patch starts from a tree with those changes too.
  const carried = plan.carriedDependencyFiles ?? []
  if (changes !== null && carried.length > 0) changes = [...new Set([...changes, ...carried])]
  const facts: RiskFacts = {
    fork: req.fork,
    network: plan.sandbox.network,
    credentials: plan.egress?.credentials.length ?? 0,
    setup: plan.setup !== undefined,
    dependencyChanges: changes,
    ...compared,
    needsNetwork: needsNetwork(plan)
  }
  return facts
}

/** The run's tier from its plan and the engine's runtimes (before any container starts). */
export async function decideIsolation(plan: RunPlan, runtime: Runtime): Promise<IsolationDecision> {
  const req = plan.isolation
  if (req === null) throw new Error('decideIsolation without isolation in the plan')
  const facts = await riskFacts(plan, req)
  const runtimes = (await runtime.ociRuntimes?.()) ?? {}
  return resolveIsolation(req, facts, runtimes)
}

/**
 * The tier a run will ask for, without the engine: the runtime named, the tier named, or the one
 * `auto` chooses from the risk facts; and whether that tier is gVisor (so the runner needs it
 * registered). The engine only decides later which of its entries serves it, or a fallback.
 */
export async function plannedTier(
  plan: RunPlan
): Promise<{ tier: string; gvisor: boolean; reasons: string[] }> {
  const req = plan.isolation
  const chosen =
    req === null
      ? { tier: plan.sandbox.runtime, reasons: [`runtime: ${plan.sandbox.runtime}`] }
      : req.requested === 'auto'
        ? chooseTier(await riskFacts(plan, req))
        : { tier: req.requested, reasons: [`isolation: ${req.requested} was asked for`] }
  return { ...chosen, gvisor: chosen.tier === STRONG_TIER }
}

/** Whether some container of the run needs a network (allowlist, setup-allow-hosts, services). */
function needsNetwork(plan: RunPlan): boolean {
  const setupHosts = plan.setup?.allowHosts.length ?? 0
  return plan.sandbox.network === 'allowlist' || setupHosts > 0 || plan.services.length > 0
}

/**
 * A runtime named directly (no `isolation`): the daemon entry that serves it for this run (gVisor's
 * network entry when the run needs a network), or a ConfigurationError when none can.
 */
export async function servingRuntime(
  plan: RunPlan,
  runtime: Runtime
): Promise<{ runtime: string; note: string | null }> {
  if (!needsNetwork(plan)) return { runtime: plan.sandbox.runtime, note: null }
  const runtimes = (await runtime.ociRuntimes?.()) ?? {}
  return resolveRuntime(plan.sandbox.runtime, runtimes, true)
}
