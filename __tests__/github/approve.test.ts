import {
  acceptedReply,
  dispatchCommand,
  runCommand
} from '../../src/github/conversation/command.js'
import { approvalRequest } from '../../src/github/gate/approval-request.js'
import { parseEvent } from '../../src/event.js'
import type { RunEvent } from '../../src/event.js'
import { HEAD } from './report-fixture.js'

describe('approval requests from events', () => {
  const ctx = (eventName: string, payload: Record<string, unknown>): RunEvent =>
    parseEvent({ GITHUB_EVENT_NAME: eventName, GITHUB_REPOSITORY: 'o/r' }, JSON.stringify(payload))
  const comment = (body: string, pr = true): RunEvent =>
    ctx('issue_comment', {
      action: 'created',
      issue: { number: 3, ...(pr ? { pull_request: { url: 'u' } } : {}) },
      comment: { body, user: { login: 'w', type: 'User' } }
    })
  test.each([
    ['/airlock approve abcdef1', 'abcdef1'],
    ['/airlock approve abcdef1\nthanks', 'abcdef1'],
    ['/airlock approve', '']
  ])('comment %j names prefix %j', (body, prefix) => {
    expect(approvalRequest(comment(body))).toMatchObject({
      pullNumber: 3,
      diffPrefix: prefix,
      source: 'comment'
    })
  })
  test.each([
    ['please /airlock approve abc'],
    ['/airlock approved'],
    ['nothing'],
    // Only the first line, at its first character, outside code, is a command.
    ['LGTM\n/airlock approve abcdef1\nthanks'],
    ['To approve, type:\n```\n/airlock approve abcdef1\n```'],
    ['```\n/airlock approve abcdef1\n```'],
    ['    /airlock approve abcdef1'],
    ['> /airlock approve abcdef1'],
    ['`/airlock approve abcdef1`']
  ])('comment %j is no approval', (body) => {
    expect(approvalRequest(comment(body))).toBeNull()
  })
  test('a comment on an issue (not a pull request) is no approval', () => {
    expect(approvalRequest(comment('/airlock approve abcdef1', false))).toBeNull()
  })
  test('only approving reviews count', () => {
    const review = (state: string): RunEvent =>
      ctx('pull_request_review', {
        action: 'submitted',
        pull_request: { number: 4 },
        review: { state, commit_id: HEAD, body: null, user: { login: 'w', type: 'User' } }
      })
    expect(approvalRequest(review('approved'))).toMatchObject({
      kind: 'approve',
      pullNumber: 4,
      commitId: HEAD,
      source: 'review'
    })
    expect(approvalRequest(review('commented'))).toBeNull()
    expect(approvalRequest(review('changes_requested'))).toMatchObject({
      kind: 'revoke',
      pullNumber: 4
    })
  })
})

describe('/airlock run comments', () => {
  const ctx = (body: string, action = 'created'): RunEvent =>
    parseEvent(
      { GITHUB_EVENT_NAME: 'issue_comment', GITHUB_REPOSITORY: 'o/r' },
      JSON.stringify({
        action,
        issue: { number: 3, pull_request: { url: 'u' } },
        comment: { id: 9, body, user: { login: 'w', type: 'User' } }
      })
    )
  test.each([
    ['/airlock run fix the cart', 'fix the cart'],
    ['/airlock run fix it\nand the tests too\n', 'fix it\nand the tests too'],
    ['/airlock run $(rm -rf /) `x`', '$(rm -rf /) `x`'],
    ['/airlock run', '']
  ])('%j gives the task %j', (body, task) => {
    expect(runCommand(ctx(body))).toMatchObject({
      pullNumber: 3,
      commentId: 9,
      task,
      edited: false
    })
  })
  test.each([
    ['please /airlock run x'],
    ['/airlock running'],
    ['> /airlock run x'],
    [' /airlock run x']
  ])('%j is no command', (body) => {
    expect(runCommand(ctx(body))).toBeNull()
  })
  test('an edited comment is read as edited (and refused later)', () => {
    expect(runCommand(ctx('/airlock run x', 'edited'))?.edited).toBe(true)
  })
})

describe('commanded runs: the manual run and the reply', () => {
  const dispatch = (payload: Record<string, unknown>): RunEvent =>
    parseEvent(
      { GITHUB_EVENT_NAME: 'workflow_dispatch', GITHUB_REPOSITORY: 'o/r' },
      JSON.stringify(payload)
    )
  test('a manual run names its pull request and the person who started it', () => {
    const ctx = dispatch({ sender: { login: 'w', type: 'User' } })
    expect(dispatchCommand(ctx, 21, ' fix it ')).toEqual({
      pullNumber: 21,
      actor: { login: 'w', type: 'User' },
      task: 'fix it',
      edited: false
    })
    expect(dispatchCommand(ctx, undefined, 'fix it')).toBeNull()
  })
  test('the reply to an accepted command links the run and says the head is pinned', () => {
    const text = acceptedReply(
      { pullNumber: 21, actor: { login: 'w', type: 'User' }, task: 't', edited: false },
      {
        accepted: true,
        task: 't',
        headSha: HEAD,
        baseSha: HEAD,
        headRef: 'patch-1',
        headRepository: 'mallory/hello',
        fork: true
      },
      'https://github.com/o/r/actions/runs/5'
    )
    expect(text).toContain(HEAD.slice(0, 12))
    expect(text).toContain('a push after this does not change what runs')
    expect(text).toContain('(https://github.com/o/r/actions/runs/5)')
    expect(text).toMatch(/fork mallory\/hello/)
  })
})
