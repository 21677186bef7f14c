// Whether the commit run mode works on is the head of a fork's pull request: then nothing in it
// may be built or run outside the sandbox (a `dockerfile` from there would be built by the
// runner's container engine, outside the hardened sandbox and its isolation tier).
import type { RunEvent } from '../event.js'
import { isPullRequestEvent } from '../event.js'
import { git } from './git.js'

/**
 * Refs that may hold a fork's commits although they look like the repository's branches: pull
 * request heads fetched under the remote's namespace, and GitHub's merge-queue branches.
 */
const NOT_OWN_BRANCH = /^refs\/remotes\/origin\/(pr\/|pull\/|gh-readonly-queue\/)/

/**
 * Why the commit `ref` (in the checkout at `repoPath`) is a fork's pull request head, or
 * undefined when it is not known to be one.
 * - A pull_request* event says so itself (`RunEvent.pullRequest.fork`, a deleted fork included).
 * - A run on any other event (a writer's `/airlock run`, a manual run for a pull request, a
 *   caller's own `ref`) resolves `ref` to its commit first, whatever form it is given in (a full or
 *   short SHA in either case, `refs/pull/N/head`, a branch): the event's own commit is the
 *   repository's; any other is taken to be the repository's own only when one of the
 *   repository's branches holds it — the remote's branches as fetched from it (refs/remotes/
 *   origin/, all of which the reusable workflow's checkout fetches), never the checkout's own
 *   local branches (`gh pr checkout 7` or `git fetch origin pull/7/head:pr-7` put a fork's head
 *   on one), and not pull request or merge-queue refs. A fork's head is only under refs/pull/, so it, or a
 *   ref git cannot resolve or place, counts as a fork's (fail closed).
 */
export async function forkHead(options: {
  event: RunEvent
  ref: string | undefined
  repoPath: string
}): Promise<string | undefined> {
  return (await headFacts(options)).fork
}

/**
 * The commit the run works on (its `ref` resolved in the checkout; undefined when it is the
 * event's own or cannot be resolved) and why it is a fork's pull request head (see
 * {@link forkHead}; undefined when it is not known to be one).
 */
export async function headFacts(options: {
  event: RunEvent
  ref: string | undefined
  repoPath: string
}): Promise<{ commit?: string; fork?: string }> {
  const { event, ref } = options
  const run = (args: string[]): Promise<string> =>
    git(args, { cwd: options.repoPath, maxStdout: 256 * 1024 }).then(
      (r) => r.stdout.toString('utf8').trim(),
      () => ''
    )
  const resolved =
    event.name === ''
      ? ''
      : await run([
          'rev-parse',
          '--verify',
          '--quiet',
          '--end-of-options',
          `${ref ?? 'HEAD'}^{commit}`
        ])
  const commit = resolved !== '' ? { commit: resolved } : {}
  const fork = await forkReason(options)
  return { ...commit, ...(fork !== undefined ? { fork } : {}) }
}

async function forkReason(options: {
  event: RunEvent
  ref: string | undefined
  repoPath: string
}): Promise<string | undefined> {
  const { event, ref } = options
  if (event.pullRequest?.fork === true)
    return `the ${event.name} event's pull request comes from a fork (${event.pullRequest.headRepository ?? 'a deleted repository'})`
  if (event.name === '' || isPullRequestEvent(event.name)) return undefined
  if (ref === undefined || ref === event.sha) return undefined
  const run = (args: string[]): Promise<string> =>
    git(args, { cwd: options.repoPath, maxStdout: 256 * 1024 }).then(
      (r) => r.stdout.toString('utf8').trim(),
      () => ''
    )
  const commit = await run([
    'rev-parse',
    '--verify',
    '--quiet',
    '--end-of-options',
    `${ref}^{commit}`
  ])
  if (commit === '')
    return `the ref ${ref} this ${event.name} run works on does not name a commit of the checkout (it cannot be told apart from a fork's pull request head)`
  if (commit === event.sha) return undefined
  const branches = (
    await run([
      'for-each-ref',
      '--format=%(refname)',
      '--contains',
      commit,
      '--end-of-options',
      'refs/remotes/origin/'
    ])
  )
    .split('\n')
    .filter((b) => b !== '' && !NOT_OWN_BRANCH.test(b))
  if (branches.length > 0) return undefined
  return `the commit ${commit} this ${event.name} run works on is on no branch of this repository (a fork's pull request head)`
}
