import type { Logger } from '../../log.js'
import { escapeMarkdown, escapeProductText } from '../../report/escape.js'
import type { GitHubClient } from '../client/client.js'
import { writerCheck } from '../gate/approvers.js'
import type { RunEvent } from '../../event.js'
import type { Writes } from '../client/writes.js'

/**
 * `/airlock run <task>` as the first line of a pull request comment (further lines continue the
 * task). The task is data: it reaches the agent as /airlock/task.md through the `task` input,
 * never a shell.
 */
const RUN = /^\/airlock[ \t]+run(?:[ \t]+([^\r\n]*))?(?:\r?\n([\s\S]*))?$/

type Repo = { owner: string; repo: string }

/** Longest task a comment may give (characters). */
export const MAX_COMMENT_TASK = 16_000

export interface RunCommand {
  pullNumber: number
  /** The comment that commanded the run; absent for a manual run (workflow_dispatch). */
  commentId?: number
  /**
   * A reply in the thread of an inline comment (a `pull_request_review_comment` event): the
   * thread's first comment, whose finding the follow-up answers. Reactions and the reply go to
   * that thread.
   */
  threadId?: number
  actor: { login: string; type: string }
  task: string
  edited: boolean
}

/**
 * Reads `/airlock run …` from an issue_comment event, or from a reply in the thread of an inline
 * review comment (pull_request_review_comment with in_reply_to_id); null when the comment is no
 * such command.
 */
export function runCommand(event: RunEvent): RunCommand | null {
  const inThread = event.name === 'pull_request_review_comment'
  if (event.name !== 'issue_comment' && !inThread) return null
  const comment = event.comment
  const pullNumber = event.pullRequest?.number
  if (comment?.id === undefined || pullNumber === undefined) return null
  const m = RUN.exec(comment.body)
  if (!m) return null
  const threadId = inThread ? comment.inReplyToId : undefined
  // In a review thread only a reply counts: a new inline comment is not in any finding's thread.
  if (inThread && threadId === undefined) return null
  const task = [m[1] ?? '', m[2] ?? ''].join('\n').trim()
  return {
    pullNumber,
    commentId: comment.id,
    ...(threadId !== undefined ? { threadId } : {}),
    actor: comment.author,
    task,
    edited: event.action !== 'created'
  }
}

/**
 * A manual run (workflow_dispatch) for pull request `pullNumber` (the `pull-request` input) with
 * the `task` input: the same checks as a comment, on the person who started the workflow.
 */
export function dispatchCommand(
  event: RunEvent,
  pullNumber: number | undefined,
  task: string | undefined
): RunCommand | null {
  if (event.name !== 'workflow_dispatch' || pullNumber === undefined) return null
  if (event.sender === undefined) return null
  return {
    pullNumber,
    actor: event.sender,
    task: (task ?? '').trim(),
    edited: false
  }
}

export type CommandDecision =
  | {
      accepted: true
      task: string
      headSha: string
      baseSha: string
      headRef: string
      headRepository: string
      fork: boolean
    }
  | { accepted: false; reason: string }

/**
 * Whether the command starts a run. Refused: edited comments (a command is what was posted, not
 * what it was changed into), bots, anyone without write access, closed pull requests, an
 * over-long task. A bare `/airlock run` (no task) is accepted with an empty task: the workflow
 * runs the repository's review task then, as on a pull request's push.
 */
export async function decideCommand(
  octokit: GitHubClient,
  repo: Repo,
  cmd: RunCommand
): Promise<CommandDecision> {
  const refuse = (reason: string): CommandDecision => ({ accepted: false, reason })
  if (cmd.edited) return refuse('an edited comment is not a command; post a new comment')
  const notWriter = await writerCheck(octokit, repo, cmd.actor, 'run')
  if (notWriter !== null) return refuse(notWriter)
  if (cmd.task.length > MAX_COMMENT_TASK)
    return refuse(`the task is over ${MAX_COMMENT_TASK} characters; put it in a file instead`)
  const pr = (await octokit.rest.pulls.get({ ...repo, pull_number: cmd.pullNumber })).data
  if (pr.state !== 'open') return refuse(`pull request #${cmd.pullNumber} is not open`)
  const headRepository = pr.head.repo?.full_name ?? ''
  return {
    accepted: true,
    task: cmd.task,
    headSha: pr.head.sha,
    baseSha: pr.base.sha,
    headRef: pr.head.ref,
    headRepository,
    fork: headRepository.toLowerCase() !== `${repo.owner}/${repo.repo}`.toLowerCase()
  }
}

/** Acknowledges the command: a reaction when accepted, a reaction and a short reply when not. */
export async function acknowledgeCommand(
  writes: Writes,
  repo: Repo,
  cmd: RunCommand,
  decision: CommandDecision,
  log: Logger,
  runUrl?: string,
  /** The earlier run a follow-up continues (its run id), when there is one. */
  continues?: string
): Promise<void> {
  if (cmd.commentId !== undefined) {
    await writes.send(
      cmd.threadId !== undefined
        ? 'POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions'
        : 'POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions',
      { ...repo, comment_id: cmd.commentId, content: decision.accepted ? 'rocket' : 'confused' },
      null
    )
  }
  // A command in a finding's thread is answered in that thread.
  const reply = async (body: string): Promise<void> => {
    await (cmd.threadId !== undefined
      ? writes.send(
          'POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies',
          { ...repo, pull_number: cmd.pullNumber, comment_id: cmd.threadId, body },
          null
        )
      : writes.send(
          'POST /repos/{owner}/{repo}/issues/{issue_number}/comments',
          { ...repo, issue_number: cmd.pullNumber, body },
          null
        ))
  }
  if (decision.accepted) {
    log.info(
      `run requested by @${cmd.actor.login} on ${decision.headSha.slice(0, 12)} (#${cmd.pullNumber})`
    )
    await reply(acceptedReply(cmd, decision, runUrl, continues))
    return
  }
  log.warn(`run not started: ${decision.reason}`)
  await reply(`Agent Airlock: run not started: ${escapeProductText(decision.reason)}`)
}

/**
 * The reply to an accepted command: who asked, the commit that runs (pinned now: a push after
 * this is not what runs), whether it is a fork's, and the link to the run.
 */
export function acceptedReply(
  cmd: RunCommand,
  decision: Extract<CommandDecision, { accepted: true }>,
  runUrl: string | undefined,
  continues?: string
): string {
  const follow =
    continues !== undefined
      ? `; it continues run \`${continues.replace(/[^A-Za-z0-9._-]/g, '')}\` (its patch, answer and the review comments since)`
      : ''
  const where = decision.fork
    ? ` of the fork ${escapeMarkdown(decision.headRepository)} (its code runs only inside the sandbox; the model key stays in the egress proxy)`
    : ''
  const link = runUrl !== undefined ? `: [the run](${runUrl})` : ''
  const review = decision.task === '' ? ' with the review task' : ''
  return `Agent Airlock: run requested by @${cmd.actor.login} on \`${decision.headSha.slice(0, 12)}\`${review}${where}${follow}; a push after this does not change what runs${link}.`
}
