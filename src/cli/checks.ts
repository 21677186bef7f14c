// Checks the command line makes before anything runs, that need no Docker engine: the output
// folder inside the current folder (the one rule for every path), the ref in the repository,
// the Dockerfile's FROM lines pinned. The runtime and isolation tier are checked against the
// engine's runtimes when the run resolves them (isolation/isolation.ts), not here.
import * as fs from 'node:fs'
import * as path from 'node:path'
import { ConfigurationError } from '../errors.js'
import { INPUT } from '../input-names.js'
import type { RunPlan } from '../plan.js'
import { baseImages, UnpinnedBaseError } from '../sandbox/dockerfile.js'
import type { BaseImage } from '../sandbox/dockerfile.js'
import { GitError, git } from '../workspace/git.js'

/** Where the tool reads and writes: the folder it was started in. */
export const OUTSIDE_RULE =
  'every path (--path, --output-dir, --dockerfile, --build-context, a task file) must stay inside the current folder'

/** `output-dir` inside the workspace, also through symlinks of its existing part. */
export function checkOutputInside(raw: string | undefined, workspace: string): void {
  if (raw === undefined) return
  const ws = path.resolve(workspace)
  const abs = path.resolve(ws, raw)
  const refuse = (how: string): never => {
    throw new ConfigurationError(
      INPUT.outputDir,
      `"${raw}" is outside the current folder ${ws}${how}; use a folder inside it (${OUTSIDE_RULE})`
    )
  }
  const rel = path.relative(ws, abs)
  if (rel.startsWith('..') || path.isAbsolute(rel)) refuse('')
  // The nearest part that exists must resolve inside too (no symlinked folder out).
  let p = abs
  while (!fs.existsSync(p) && path.dirname(p) !== p) p = path.dirname(p)
  const realRel = path.relative(fs.realpathSync(ws), fs.realpathSync(p))
  if (realRel.startsWith('..') || path.isAbsolute(realRel)) refuse(' (through a symlink)')
}

/** The ref names a commit of the repository at `repoPath`. */
export async function checkRef(repoPath: string, ref: string): Promise<void> {
  try {
    await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], {
      cwd: repoPath
    })
  } catch (error) {
    if (!(error instanceof GitError)) throw error
    const inRepo = await git(['rev-parse', '--git-dir'], { cwd: repoPath }).then(
      () => true,
      () => false
    )
    if (!inRepo)
      throw new ConfigurationError(
        INPUT.path,
        `${repoPath} is not a git repository; run in a checkout or give --path to one`
      )
    throw new ConfigurationError(
      INPUT.ref,
      `"${ref}" is not a commit in ${repoPath}; give a branch, tag or SHA that exists there (git log --oneline shows them)`
    )
  }
}

/** The FROM lines of the Dockerfile a run builds (undefined: no build, or it cannot be read). */
export function dockerfileBases(plan: RunPlan): BaseImage[] | undefined {
  if (plan.image.kind !== 'build') return undefined
  try {
    return baseImages(fs.readFileSync(plan.image.dockerfile, 'utf8'), plan.image.buildArgs)
  } catch {
    return undefined
  }
}

/** A built image's FROM lines pinned by digest, unless `allow-unpinned-base`. */
export function checkPinnedBases(plan: RunPlan): void {
  if (plan.image.kind !== 'build' || plan.image.allowUnpinnedBase) return
  const unpinned = (dockerfileBases(plan) ?? []).filter((b) => b.pin === 'unpinned')
  // The same error the run's image stage raises.
  if (unpinned.length > 0) throw new UnpinnedBaseError(unpinned)
}

/** Everything above that needs the plan; before the first container, for run and plan alike. */
export async function checkPlan(plan: RunPlan): Promise<void> {
  await checkRef(plan.repo.path, plan.repo.ref)
  checkPinnedBases(plan)
}

/**
 * `plan` without the model key: the environment the plan is computed with (a stand-in key, never
 * printed: the plan holds no secret value) and the note that the run will need the real one.
 */
export function planEnvironment(
  env: NodeJS.ProcessEnv,
  agent: unknown,
  keyEnv: string
): { env: NodeJS.ProcessEnv; needs: string[] } {
  if (typeof agent !== 'string' || agent === '' || (env[keyEnv] ?? '') !== '')
    return { env, needs: [] }
  return {
    env: { ...env, [keyEnv]: 'not-set-at-plan-time' },
    needs: [
      `$${keyEnv} at run time: ${agent} sends its model requests with it (not set now; the plan was made without it)`
    ]
  }
}
