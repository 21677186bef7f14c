// The command job finds the run a follow-up continues only in the action's own latest review, and
// the discussion only in the threads of that review's own inline findings, by people, since then.
import { discussionSince, findEarlierRun } from '../../src/github/conversation/follow-up.js'
import type { GitHubClient } from '../../src/github/client/client.js'
import { markerFor } from '../../src/github/review/marker.js'
import { acceptedReply } from '../../src/github/conversation/command.js'

const ME = { login: 'github-actions[bot]' }
const HEAD = 'a1'.repeat(20)
const DIFF = 'c3'.repeat(32)
const user = (login: string, type = 'User') => ({ login, type })

const COMMENTS = [
  // The earlier review's (1001) own findings.
  {
    id: 1,
    pull_request_review_id: 1001,
    user: user(ME.login, 'Bot'),
    body: 'finding',
    path: 'greet.mjs',
    line: 3,
    created_at: '2026-12-01T10:00:00Z'
  },
  {
    id: 2,
    pull_request_review_id: 1001,
    user: user(ME.login, 'Bot'),
    body: 'finding 2',
    path: 'b.md',
    line: null,
    original_line: 9,
    created_at: '2026-12-01T10:00:00Z'
  },
  // A comment someone else started in review 1001's thread list: not a finding of the action.
  {
    id: 3,
    pull_request_review_id: 1001,
    user: user('mallory'),
    body: 'root by mallory',
    path: 'x',
    line: 1,
    created_at: '2026-12-01T10:01:00Z'
  },
  // An older review's finding.
  {
    id: 4,
    pull_request_review_id: 900,
    user: user(ME.login, 'Bot'),
    body: 'old',
    path: 'old',
    line: 1,
    created_at: '2026-11-30T10:00:00Z'
  },
  // Replies.
  {
    id: 10,
    in_reply_to_id: 1,
    pull_request_review_id: 2000,
    user: user('octo-writer'),
    body: 'second reply',
    author_association: 'COLLABORATOR',
    path: 'greet.mjs',
    created_at: '2026-12-01T11:00:00Z'
  },
  {
    id: 11,
    in_reply_to_id: 2,
    pull_request_review_id: 2001,
    user: user('octo-reader'),
    body: 'first reply',
    author_association: 'CONTRIBUTOR',
    path: 'b.md',
    created_at: '2026-12-01T10:30:00Z'
  },
  {
    id: 12,
    in_reply_to_id: 1,
    pull_request_review_id: 2002,
    user: user('dependabot[bot]', 'Bot'),
    body: 'bot',
    path: 'greet.mjs',
    created_at: '2026-12-01T11:00:00Z'
  },
  {
    id: 13,
    in_reply_to_id: 1,
    pull_request_review_id: 2003,
    user: user(ME.login, 'Bot'),
    body: 'mine',
    path: 'greet.mjs',
    created_at: '2026-12-01T11:00:00Z'
  },
  {
    id: 14,
    in_reply_to_id: 3,
    pull_request_review_id: 2004,
    user: user('octo-writer'),
    body: 'reply to mallory',
    path: 'x',
    created_at: '2026-12-01T11:00:00Z'
  },
  {
    id: 15,
    in_reply_to_id: 4,
    pull_request_review_id: 2005,
    user: user('octo-writer'),
    body: 'on the old run',
    path: 'old',
    created_at: '2026-12-01T11:00:00Z'
  },
  {
    id: 16,
    in_reply_to_id: 1,
    pull_request_review_id: 2006,
    user: user('octo-writer'),
    body: 'before the review',
    path: 'greet.mjs',
    created_at: '2026-12-01T09:00:00Z'
  }
]

test('the people’s replies to the action’s own findings of that review since it was posted, oldest first, with the finding’s place', () => {
  expect(discussionSince(COMMENTS, 1001, ME, '2026-12-01T10:00:00Z')).toEqual([
    // Who they are to the repository, as GitHub says: the agent is told.
    { author: 'octo-reader', body: 'first reply', path: 'b.md', line: 9, association: 'other' },
    {
      author: 'octo-writer',
      body: 'second reply',
      path: 'greet.mjs',
      line: 3,
      association: 'collaborator'
    }
  ])
})

function fakeOctokit(reviews: unknown[], comments: unknown[] = COMMENTS): GitHubClient {
  const listReviews = Symbol('listReviews')
  const listReviewComments = Symbol('listReviewComments')
  return {
    rest: { pulls: { listReviews, listReviewComments } },
    paginate: async (route: symbol) => (route === listReviews ? reviews : comments)
  } as unknown as GitHubClient
}

test('the run the action’s own latest review names, its artifact, and the review’s address', async () => {
  const own = (id: number, runId: string, extra = '') => ({
    id,
    user: user(ME.login, 'Bot'),
    state: 'COMMENTED',
    body: `review${extra}\n${markerFor({ runId, headSha: HEAD, diffSha256: DIFF })}`,
    submitted_at: '2026-12-01T10:00:00Z'
  })
  const forged = {
    id: 5000,
    user: user('mallory'),
    state: 'COMMENTED',
    body: markerFor({ runId: '666-1', headSha: HEAD, diffSha256: DIFF }),
    submitted_at: '2026-12-01T12:00:00Z'
  }
  const found = await findEarlierRun(
    fakeOctokit([own(900, '111-1'), own(1001, '555-2'), forged]),
    { owner: 'octo-org', repo: 'hello' },
    7,
    ME,
    'https://github.com'
  )
  expect(found).toEqual({
    runId: '555',
    artifact: 'airlock-555-2',
    context: {
      runId: '555-2',
      headSha: HEAD,
      diffSha256: DIFF,
      reviewUrl: 'https://github.com/octo-org/hello/pull/7#pullrequestreview-1001',
      comments: [
        { author: 'octo-reader', body: 'first reply', path: 'b.md', line: 9, association: 'other' },
        {
          author: 'octo-writer',
          body: 'second reply',
          path: 'greet.mjs',
          line: 3,
          association: 'collaborator'
        }
      ]
    }
  })
})

test('no review of the action’s own, or a run id that names no workflow run: a fresh run', async () => {
  const repo = { owner: 'octo-org', repo: 'hello' }
  expect(await findEarlierRun(fakeOctokit([]), repo, 7, ME, 'https://github.com')).toBeNull()
  const custom = {
    id: 1,
    user: user(ME.login, 'Bot'),
    state: 'COMMENTED',
    body: markerFor({ runId: 'my-run', headSha: HEAD, diffSha256: DIFF }),
    submitted_at: null
  }
  expect(await findEarlierRun(fakeOctokit([custom]), repo, 7, ME, 'https://github.com')).toBeNull()
})

test('the reply to a follow-up says which run it continues', () => {
  const reply = acceptedReply(
    { pullNumber: 7, actor: { login: 'octo-writer', type: 'User' }, task: 't', edited: false },
    {
      accepted: true,
      task: 't',
      headSha: HEAD,
      baseSha: HEAD,
      headRef: 'f',
      headRepository: 'octo-org/hello',
      fork: false
    },
    undefined,
    '555-2'
  )
  expect(reply).toContain('it continues run `555-2`')
})
