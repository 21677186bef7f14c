// Whether the commit run mode works on is the head of a fork's pull request: then nothing in it
// may be built or run outside the sandbox (a `dockerfile` from there would be built by the
// runner's container engine, outside the hardened sandbox and its isolation tier).
import type { RunEvent } from '../event.js'
import { isPullRequestEvent } from '../event.js'
import { git } from './git.js'

const FULL_SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/

/**
 * Why the commit `ref` (in the checkout at `repoPath`) is a fork's pull request head, or
 * undefined when it is not known to be one.
 * - A pull_request* event says so itself (`RunEvent.pullRequest.fork`, a deleted fork included).
 * - A run a writer commanded for a pull request (`/airlock run`, a manual run for a pull request)
 *   runs on a non-pull-request event at a commit pinned by full SHA, other than the event's own
 *   commit. Such a commit is taken to be the repository's own only when one of the repository's
 *   branches in the checkout holds it (the reusable workflow fetches them all); a fork's head is
 *   only under refs/pull/, so it, or a commit git cannot place, counts as a fork's (fail closed).
 */
export async function forkHead(options: {
  event: RunEvent
  ref: string | undefined
  repoPath: string
}): Promise<string | undefined> {
  const { event, ref } = options
  if (event.pullRequest?.fork === true)
    return `the ${event.name} event's pull request comes from a fork (${event.pullRequest.headRepository ?? 'a deleted repository'})`
  if (event.name === '' || isPullRequestEvent(event.name)) return undefined
  if (ref === undefined || !FULL_SHA.test(ref) || ref === event.sha) return undefined
  const branches = await git(
    [
      'for-each-ref',
      '--format=%(refname)',
      '--contains',
      ref,
      '--end-of-options',
      'refs/remotes/origin/',
      'refs/heads/'
    ],
    { cwd: options.repoPath, maxStdout: 64 * 1024 }
  ).then(
    (r) => r.stdout.toString('utf8').trim(),
    () => ''
  )
  if (branches !== '') return undefined
  return `the commit ${ref} this ${event.name} run works on is on no branch of this repository (a fork's pull request head)`
}
