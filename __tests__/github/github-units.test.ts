import * as fs from 'node:fs'
import { parse } from 'yaml'
import { approvalRequest } from '../../src/github/approve.js'
import { runCommand } from '../../src/github/command.js'
import { GITHUB_INPUT, GITHUB_OUTPUT } from '../../src/github/context.js'
import type { EventContext } from '../../src/github/context.js'
import { InvalidEvidenceError, parseReport } from '../../src/github/evidence.js'
import { gateAfterRun, gateApproved } from '../../src/github/gate.js'
import {
  isSuperseded,
  markerFor,
  parseMarker,
  sameEvidence,
  supersededBody
} from '../../src/github/marker.js'
import { marker as rendererMarker } from '../../src/report/comment.js'
import type { Report } from '../../src/report/report.js'

const HEAD = 'a'.repeat(40)
const DIFF = 'b'.repeat(64)

function report(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schemaVersion: 1,
    runId: '12-1',
    outcome: 'success',
    outcomeReason: 'ok',
    startedAt: 'x',
    finishedAt: 'y',
    repo: { headSha: HEAD, baseSha: HEAD },
    image: { id: 'sha256:' + 'c'.repeat(64), ref: null },
    diff: { sha256: DIFF, files: [] },
    policy: { violations: [] },
    ...overrides
  }
}

describe('marker', () => {
  test('parses what the comment renderer writes', () => {
    const m = rendererMarker({
      runId: '12-1',
      repo: { headSha: HEAD },
      diff: { sha256: DIFF }
    } as unknown as Report)
    expect(parseMarker(`body\n\n${m}\n`)).toEqual({
      runId: '12-1',
      headSha: HEAD,
      diffSha256: DIFF
    })
    expect(markerFor({ runId: '12-1', headSha: HEAD, diffSha256: DIFF })).toBe(m)
  })

  test.each([
    ['no marker', 'hello'],
    ['short sha', `<!-- airlock:report {"runId":"1","headSha":"abc","diffSha256":null} -->`],
    [
      'extra key',
      `<!-- airlock:report {"runId":"1","headSha":"${HEAD}","diffSha256":null,"x":"1"} -->`
    ],
    ['wrong type', `<!-- airlock:report {"runId":1,"headSha":"${HEAD}","diffSha256":null} -->`],
    ['bad diff', `<!-- airlock:report {"runId":"1","headSha":"${HEAD}","diffSha256":"zz"} -->`],
    ['broken json', `<!-- airlock:report {"runId":"1","headSha":"${HEAD}" -->`]
  ])('%s is no marker', (_name, body) => {
    expect(parseMarker(body)).toBeNull()
  })

  test('superseded bodies keep their marker and are marked once', () => {
    const body = `report\n\n${markerFor({ runId: '12-1', headSha: HEAD, diffSha256: DIFF })}\n`
    const once = supersededBody(body, '13-1')
    expect(isSuperseded(once)).toBe(true)
    expect(supersededBody(once, '14-1')).toBe(once)
    expect(parseMarker(once)?.runId).toBe('12-1')
  })

  test('the same evidence is the same run, head and diff', () => {
    const m = { runId: '12-1', headSha: HEAD, diffSha256: DIFF }
    expect(sameEvidence(m, { ...m })).toBe(true)
    expect(sameEvidence(m, { ...m, diffSha256: 'c'.repeat(64) })).toBe(false)
    expect(sameEvidence(null, m)).toBe(false)
  })
})

describe('report validation (untrusted artifact)', () => {
  test('accepts a well-formed report', () => {
    expect(parseReport(report())).toMatchObject({ runId: '12-1', headSha: HEAD, diffSha256: DIFF })
  })
  test.each([
    ['schemaVersion 2', { schemaVersion: 2 }, /schemaVersion 2/],
    ['run id with markup', { runId: '1 <b>' }, /runId/],
    ['unknown outcome', { outcome: 'great' }, /outcome must be/],
    ['head not a sha', { repo: { headSha: 'main', baseSha: null } }, /headSha/],
    ['diff sha wrong', { diff: { sha256: 'abc', files: [] } }, /diff.sha256/],
    ['violations not array', { policy: { violations: {} } }, /violations/],
    ['no image', { image: undefined }, /image must be/]
  ])('%s is refused', (_name, overrides, message) => {
    expect(() => parseReport(report(overrides))).toThrow(InvalidEvidenceError)
    expect(() => parseReport(report(overrides))).toThrow(message)
  })
})

describe('gate payloads', () => {
  test.each([
    ['success', [], 'pending', `awaiting approval of diff ${DIFF.slice(0, 12)}`],
    ['tests-failed', [], 'pending', `awaiting approval of diff ${DIFF.slice(0, 12)}`],
    ['policy-violation', [], 'failure', 'policy-violation: not approvable; run 12-1'],
    ['tests-failed', ['tests-failed'], 'failure', 'tests-failed: not approvable; run 12-1']
  ])('%s with fail-outcomes %j → %s', (outcome, fail, state, description) => {
    const facts = parseReport(report({ outcome }))
    const status = gateAfterRun(
      facts,
      ['policy-violation', ...(fail as never[])],
      'airlock/approval'
    )
    expect(status).toEqual({ state, description, context: 'airlock/approval' })
  })
  test('descriptions stay within 140 characters', () => {
    expect(gateApproved('x'.repeat(200), DIFF, 'c').description.length).toBeLessThanOrEqual(140)
  })
})

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
    const review = (state: string): EventContext =>
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

describe('action.yml', () => {
  const action = parse(fs.readFileSync('action.yml', 'utf8')) as {
    inputs: Record<string, { description: string }>
    outputs: Record<string, { description: string }>
  }
  test.each(Object.values(GITHUB_INPUT))('declares input %s', (name) => {
    expect(action.inputs[name]?.description).toBeTruthy()
  })
  test.each(Object.values(GITHUB_OUTPUT))('declares output %s', (name) => {
    expect(action.outputs[name]?.description).toBeTruthy()
  })
})

describe('/airlock run comments', () => {
  const ctx = (body: string, action = 'created'): EventContext => ({
    eventName: 'issue_comment',
    owner: 'o',
    repo: 'r',
    payload: {
      action,
      issue: { number: 3, pull_request: { url: 'u' } },
      comment: { id: 9, body, user: { login: 'w', type: 'User' } }
    },
    serverUrl: 'https://github.com'
  })
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
