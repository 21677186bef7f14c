// `/airlock run …` as a reply in the thread of one of the agent's inline findings: the command is
// read from the pull_request_review_comment event, answered in that thread, and the follow-up's
// context is that finding and that thread's replies.
import { webhook } from '../../__fixtures__/action-harness.js'
import { acknowledgeCommand, runCommand } from '../../src/github/conversation/command.js'
import type { CommandDecision } from '../../src/github/conversation/command.js'
import { parseEvent } from '../../src/event.js'
import type { RunEvent } from '../../src/event.js'
import type { GitHubClient } from '../../src/github/client/client.js'
import { findEarlierRun } from '../../src/github/conversation/follow-up.js'
import { markerFor } from '../../src/github/review/marker.js'
import { Writes } from '../../src/github/client/writes.js'
import { formatContinueContext, parseContinueContext } from '../../src/continue-context.js'
import { continuationTask } from '../../src/pipeline/continuation.js'

const ME = { login: 'github-actions[bot]' }
const HEAD = 'a1'.repeat(20)
const DIFF = 'c3'.repeat(32)

function reviewCommentEvent(body: string, inReplyTo?: number): RunEvent {
  const payload = webhook('pull_request_review_comment', 'created', (p) => {
    p.pull_request.number = 7
    p.comment.id = 5555
    p.comment.body = body
    p.comment.user.login = 'writer-wendy'
    p.comment.user.type = 'User'
    if (inReplyTo === undefined) delete p.comment.in_reply_to_id
    else p.comment.in_reply_to_id = inReplyTo
  })
  return parseEvent(
    { GITHUB_EVENT_NAME: 'pull_request_review_comment', GITHUB_REPOSITORY: 'octo-org/hello' },
    JSON.stringify(payload)
  )
}

test('a reply in a thread is a command for that thread; a new inline comment is none', () => {
  expect(runCommand(reviewCommentEvent('/airlock run handle the empty name', 1001000))).toEqual({
    pullNumber: 7,
    commentId: 5555,
    threadId: 1001000,
    actor: { login: 'writer-wendy', type: 'User' },
    task: 'handle the empty name',
    edited: false
  })
  expect(runCommand(reviewCommentEvent('/airlock run handle the empty name'))).toBeNull()
  expect(runCommand(reviewCommentEvent('thanks', 1001000))).toBeNull()
})

test('the reaction and the answer go to the thread', async () => {
  const ctx = reviewCommentEvent('/airlock run x', 1001000)
  const cmd = runCommand(ctx)!
  const writes = new Writes({} as GitHubClient, true)
  const accepted: CommandDecision = {
    accepted: true,
    task: 'x',
    headSha: HEAD,
    baseSha: HEAD,
    headRef: 'feature',
    headRepository: 'octo-org/hello',
    fork: false
  }
  const log = { info: () => undefined, warn: () => undefined } as never
  await acknowledgeCommand(
    writes,
    { owner: 'octo-org', repo: 'hello' },
    cmd,
    accepted,
    log,
    undefined,
    '555-1'
  )
  expect(writes.calls.map((c) => c.route)).toEqual([
    'POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions',
    'POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies'
  ])
  expect(writes.calls[0].params).toMatchObject({ comment_id: 5555, content: 'rocket' })
  expect(writes.calls[1].params).toMatchObject({ pull_number: 7, comment_id: 1001000 })
  expect(String(writes.calls[1].params.body)).toContain('it continues run `555-1`')
})

const user = (login: string, type = 'User') => ({ login, type })
const COMMENTS = [
  {
    id: 1,
    pull_request_review_id: 1001,
    user: user(ME.login, 'Bot'),
    body: 'Say it in the changelog.',
    path: 'greet.mjs',
    line: 3,
    created_at: '2026-12-01T10:00:00Z'
  },
  {
    id: 2,
    pull_request_review_id: 1001,
    user: user(ME.login, 'Bot'),
    body: 'other finding',
    path: 'b.md',
    line: 9,
    created_at: '2026-12-01T10:00:00Z'
  },
  {
    id: 10,
    in_reply_to_id: 1,
    pull_request_review_id: 2000,
    user: user('octo-reader'),
    body: 'in the thread',
    path: 'greet.mjs',
    created_at: '2026-12-01T10:30:00Z'
  },
  {
    id: 11,
    in_reply_to_id: 2,
    pull_request_review_id: 2001,
    user: user('octo-reader'),
    body: 'other thread',
    path: 'b.md',
    created_at: '2026-12-01T10:31:00Z'
  },
  // The command itself: instructions, not discussion.
  {
    id: 5555,
    in_reply_to_id: 1,
    pull_request_review_id: 2002,
    user: user('writer-wendy'),
    body: '/airlock run x',
    path: 'greet.mjs',
    created_at: '2026-12-01T11:00:00Z'
  }
]

function fakeOctokit(): GitHubClient {
  const listReviews = Symbol('listReviews')
  const listReviewComments = Symbol('listReviewComments')
  const review = {
    id: 1001,
    user: user(ME.login, 'Bot'),
    state: 'COMMENTED',
    body: markerFor({ runId: '555-1', headSha: HEAD, diffSha256: DIFF }),
    submitted_at: '2026-12-01T10:00:00Z'
  }
  return {
    rest: { pulls: { listReviews, listReviewComments } },
    paginate: async (route: symbol) => (route === listReviews ? [review] : COMMENTS)
  } as unknown as GitHubClient
}

test('the follow-up context is that finding and that thread’s replies; the command is not one of them', async () => {
  const repo = { owner: 'octo-org', repo: 'hello' }
  const found = await findEarlierRun(fakeOctokit(), repo, 7, ME, 'https://github.com', {
    commentId: 5555,
    threadId: 1
  })
  expect(found?.context.thread).toEqual({
    path: 'greet.mjs',
    line: 3,
    finding: 'Say it in the changelog.'
  })
  expect(found?.context.comments).toEqual([
    { author: 'octo-reader', body: 'in the thread', path: 'greet.mjs', line: 3 }
  ])
  // A thread that is not one of the review's findings: a plain follow-up, every thread.
  const plain = await findEarlierRun(fakeOctokit(), repo, 7, ME, 'https://github.com', {
    commentId: 5555,
    threadId: 10
  })
  expect(plain?.context.thread).toBeUndefined()
  expect(plain?.context.comments.map((c) => c.body)).toEqual(['in the thread', 'other thread'])

  // It travels to the run and into the task, quoted.
  const back = parseContinueContext('continue-context', formatContinueContext(found!.context))
  expect(back.thread).toEqual(found?.context.thread)
  const task = continuationTask(
    'handle it',
    { runId: '555-1', outcome: 'success', task: 't', answer: 'a' },
    { note: 'n' },
    back.comments,
    back.thread
  )
  expect(task).toContain(
    '### The finding these instructions answer (they were posted in its thread on greet.mjs:3)\n\n```text\nSay it in the changelog.\n```'
  )
  expect(task).toContain('### Review comments in that thread since (1)')
})
