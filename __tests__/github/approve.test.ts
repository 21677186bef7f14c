import { approvalRequest } from '../../src/github/approve.js'
import type { EventContext } from '../../src/github/context.js'
import { HEAD } from './report-fixture.js'

describe('approval requests from events', () => {
  const ctx = (eventName: string, payload: Record<string, unknown>): EventContext => ({
    eventName,
    owner: 'o',
    repo: 'r',
    payload,
    serverUrl: 'https://github.com'
  })
  const comment = (body: string, pr = true): EventContext =>
    ctx('issue_comment', {
      action: 'created',
      issue: { number: 3, ...(pr ? { pull_request: { url: 'u' } } : {}) },
      comment: { body, user: { login: 'w', type: 'User' } }
    })
  test.each([
    ['/airlock approve abcdef1', 'abcdef1'],
    ['LGTM\n/airlock approve abcdef1\nthanks', 'abcdef1'],
    ['/airlock approve', '']
  ])('comment %j names prefix %j', (body, prefix) => {
    expect(approvalRequest(comment(body))).toMatchObject({
      pullNumber: 3,
      diffPrefix: prefix,
      source: 'comment'
    })
  })
  test.each([['please /airlock approve abc'], ['/airlock approved'], ['nothing']])(
    'comment %j is no approval',
    (body) => {
      expect(approvalRequest(comment(body))).toBeNull()
    }
  )
  test('a comment on an issue (not a pull request) is no approval', () => {
    expect(approvalRequest(comment('/airlock approve abcdef1', false))).toBeNull()
  })
  test('only approving reviews count', () => {
    const review = (state: string): EventContext =>
      ctx('pull_request_review', {
        action: 'submitted',
        pull_request: { number: 4 },
        review: { state, commit_id: HEAD, body: null, user: { login: 'w', type: 'User' } }
      })
    expect(approvalRequest(review('approved'))).toMatchObject({
      pullNumber: 4,
      commitId: HEAD,
      source: 'review'
    })
    expect(approvalRequest(review('commented'))).toBeNull()
    expect(approvalRequest(review('changes_requested'))).toBeNull()
  })
})
