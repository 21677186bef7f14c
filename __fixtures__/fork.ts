/**
 * The fork's side of the test world, shared by the action-level tests of the fork publisher and
 * the comment command (`__tests__/github/fork.e2e.test.ts`) and by the workflow-level tests of
 * the same flows (`__tests__/workflows/fork-and-comment.e2e.test.ts`): the fork's pull request on
 * the stand-in, the `workflow_run` event GitHub sends when the fork's run finished, and the
 * `issue_comment` event of a command.
 */
import { PEOPLE, PR_NUMBER, commentEvent, makeWorld, webhook } from './action-harness.js'
import type { World } from './action-harness.js'
import type { User } from './github-stand-in.js'

/** The fork's head commit: it exists only in the fork, never in the base repository. */
export const FORK_HEAD = 'f0'.repeat(20)
export const FORK_PR = 21
export const FORK_REPO = 'mallory/hello'
/** The id of the fork's finished `pull_request` run. */
export const FORK_RUN = '777'
/** The id of the comment in `commandComment` (the reaction names it). */
export const COMMENT_ID = 4242

/** A world (see makeWorld) with the fork's open pull request FORK_PR next to PR_NUMBER. */
export async function makeForkWorld(files?: Parameters<typeof makeWorld>[0]): Promise<World> {
  const world = await makeWorld(files)
  world.api.pulls.set(FORK_PR, {
    number: FORK_PR,
    user: PEOPLE.mallory,
    headRef: 'patch-1',
    baseRef: 'main',
    headRepo: FORK_REPO,
    state: 'open',
    draft: false,
    title: 'From a fork',
    body: '',
    foreignHeadSha: FORK_HEAD
  })
  return world
}

/**
 * The `workflow_run` (completed) event of a finished `pull_request` run on `headSha` from
 * `headRepo`, as GitHub sends it for a fork: the event lists no pull request.
 */
export function finishedRun(
  headRepo: string,
  o: { runId?: string; headSha?: string } = {}
): Record<string, unknown> {
  return webhook('workflow_run', 'completed', (p) => {
    p.workflow_run.id = Number(o.runId ?? FORK_RUN)
    p.workflow_run.run_attempt = 1
    p.workflow_run.name = 'Agent Airlock on pull requests'
    p.workflow_run.event = 'pull_request'
    p.workflow_run.conclusion = 'success'
    p.workflow_run.head_sha = o.headSha ?? FORK_HEAD
    p.workflow_run.head_repository.full_name = headRepo
    // What GitHub sends for a fork's run: no pull requests.
    p.workflow_run.pull_requests = []
  })
}

/** The `issue_comment` event of `user` commenting `body` (comment COMMENT_ID) on pull `pull`. */
export function commandComment(
  user: User,
  body: string,
  action = 'created',
  pull = PR_NUMBER
): Record<string, unknown> {
  const event = commentEvent(user, body, action, pull)
  ;(event.comment as { id: number }).id = COMMENT_ID
  return event
}
