import {
  approvalRules,
  countApprovals,
  tallyDescription
} from '../../src/github/gate/approval-count.js'
import type { Candidate, Tally } from '../../src/github/gate/approval-count.js'
import { approvalRequest } from '../../src/github/gate/approval-request.js'
import { gateAfterRun } from '../../src/github/gate/gate.js'
import { parseEvent } from '../../src/event.js'
import { parsePolicy } from '../../src/policy/policy-file.js'
import { protectedNextStep } from '../../src/report/protected-step.js'
import { ConfigurationError } from '../../src/errors.js'

const DIFF = 'ab'.repeat(32)
const SHORT = DIFF.slice(0, 12)
const person = (login: string, more: Partial<Candidate> = {}): Candidate => ({
  login,
  diffPrefix: '1a2b3c4d5e6f',
  acknowledges: false,
  protectedApprover: false,
  author: false,
  ...more
})
describe('required-approvals and protected-approvers in the policy file', () => {
  test('both are policy settings, checked for their form', () => {
    expect(
      parsePolicy('required-approvals: 2\nprotected-approvers: [alice, "@org/security"]\n').values
    ).toEqual({ 'required-approvals': '2', 'protected-approvers': 'alice\n@org/security' })
    expect(() => parsePolicy('required-approvals: 0\n')).toThrow(/required-approvals/)
    expect(approvalRules({})).toEqual({ required: 1, protectedApprovers: [] })
    expect(approvalRules({ 'required-approvals': '2' }).required).toBe(2)
    expect(() => approvalRules({ 'required-approvals': '4' })).toThrow(ConfigurationError)
  })
})

describe('counting approvals (the latest action of each person, rebuilt from the record)', () => {
  const rules = (required: number, protectedApprovers: string[] = []) => ({
    required,
    protectedApprovers
  })
  const count = (
    people: Candidate[],
    r = rules(1),
    o: { blockers?: string[]; protectedChanged?: boolean } = {}
  ) => countApprovals(people, o.blockers ?? [], r, o.protectedChanged ?? false, SHORT)

  test('with required-approvals: 2 one approval is not enough; a second person turns it green', () => {
    const first = count([person('alice')], rules(2))
    expect(first).toMatchObject({ done: false })
    expect(first.missing.join('; ')).toMatch(/1 of 2 required approvals/)
    // The same person twice (any case) is one person.
    expect(count([person('alice'), person('Alice')], rules(2)).tally.approvers).toEqual(['alice'])
    expect(count([person('alice'), person('bob')], rules(2))).toMatchObject({ done: true })
  })

  test('a writer whose latest action requests changes blocks the gate, however many approve', () => {
    const r = count([person('alice'), person('bob')], rules(2), { blockers: ['carol'] })
    expect(r.done).toBe(false)
    expect(r.missing.join('; ')).toMatch(/@carol requested changes/)
    expect(tallyDescription(r.tally, 2, SHORT)).toBe(
      `changes requested by @carol; approvals 2/2 by @alice @bob for diff ${SHORT}`
    )
  })

  test('the author never counts toward more than one approval', () => {
    const r = count([person('carol', { author: true })], rules(2))
    expect(r.done).toBe(false)
    expect(r.tally.approvers).toEqual([])
    expect(count([person('carol', { author: true })], rules(1)).done).toBe(true)
  })

  test('a protected change stays pending after a plain approval, with the reason; the acknowledged one turns it green', () => {
    const plain = count([person('alice')], rules(1), { protectedChanged: true })
    expect(plain.done).toBe(false)
    expect(plain.missing.join('; ')).toMatch(/`\/airlock approve 1a2b3c4d5e6f protected`/)
    expect(
      count([person('alice', { acknowledges: true })], rules(1), { protectedChanged: true })
    ).toMatchObject({ done: true })
    expect(count([], rules(1), { protectedChanged: true }).missing.join('; ')).toMatch(
      /touches protected paths/
    )
  })

  test('with protected-approvers, only theirs acknowledges a protected change', () => {
    const named = rules(1, ['sec-lead'])
    const other = count([person('alice', { acknowledges: true })], named, {
      protectedChanged: true
    })
    expect(other.missing.join('; ')).toMatch(/protected-approvers \(sec-lead\)/)
    expect(
      count([person('sec-lead', { protectedApprover: true })], named, { protectedChanged: true })
    ).toMatchObject({ done: true })
  })

  test('the tally in the gate description fits in 140 characters (it is shown, never read back)', () => {
    const long = 'a'.repeat(39)
    const t: Tally = {
      approvers: [long, `b${long.slice(1)}`],
      protectedChanged: true,
      acknowledged: true,
      blockers: []
    }
    expect(tallyDescription(t, 3, SHORT).length).toBeLessThanOrEqual(140)
    expect(tallyDescription({ ...t, approvers: [] }, 3, SHORT)).toBe(
      `awaiting approval of diff ${SHORT}; protected paths changed`
    )
  })

  test('the pending gate of a protected change says so, for people', () => {
    const report = {
      schemaVersion: 1 as const,
      runId: '1-1',
      outcome: 'success' as const,
      outcomeReason: '',
      headSha: 'c'.repeat(40),
      baseSha: null,
      diffSha256: DIFF,
      imageId: null,
      imageRef: null,
      violations: []
    }
    const guarded = gateAfterRun(report, [], 'airlock/approval', undefined, true)
    expect(guarded.description).toBe(`awaiting approval of diff ${SHORT}; protected paths changed`)
  })
})

describe('the acknowledgement in the command', () => {
  const comment = (body: string) =>
    approvalRequest(
      parseEvent(
        { GITHUB_EVENT_NAME: 'issue_comment', GITHUB_REPOSITORY: 'o/r' },
        JSON.stringify({
          action: 'created',
          issue: { number: 3, pull_request: { url: 'u' } },
          comment: { body, user: { login: 'w', type: 'User' } }
        })
      )
    )
  test.each([
    [`/airlock approve ${SHORT} protected`, true],
    [`/airlock approve ${SHORT}`, false],
    [`/airlock approve ${SHORT}\nprotected`, false]
  ])('%j acknowledges protected paths: %s', (body, ack) => {
    expect(comment(body)).toMatchObject({ diffPrefix: SHORT, acknowledgesProtected: ack })
  })
  test('anything else after the prefix is no command', () => {
    expect(comment(`/airlock approve ${SHORT} sure`)).toBeNull()
  })
})

describe("the review's next step for protected paths", () => {
  test('says which approval turns the gate green', () => {
    expect(protectedNextStep(DIFF, [], { required: 1, protectedApprovers: [] })).toBeNull()
    expect(protectedNextStep(DIFF, [{}], { required: 1, protectedApprovers: [] })).toBe(
      `this change touches a protected path (see Policy above): the gate turns green only with an approval that acknowledges them: \`/airlock approve ${SHORT} protected\`.`
    )
    expect(
      protectedNextStep(DIFF, [{}, {}], { required: 2, protectedApprovers: ['@org/sec'] })
    ).toMatch(
      /2 protected paths.*one of the protected-approvers \(@org\/sec\); 2 approvals from different people/
    )
    expect(
      protectedNextStep(DIFF, [{}], { required: 1, protectedApprovers: [], approversNamed: true })
    ).toMatch(/protected-approvers named in \.github\/airlock\.yml/)
  })
})

describe('a dismissed review', () => {
  test('is read as a request to rebuild the decision (never as an approval), naming who dismissed it', () => {
    const req = approvalRequest(
      parseEvent(
        { GITHUB_EVENT_NAME: 'pull_request_review', GITHUB_REPOSITORY: 'o/r' },
        JSON.stringify({
          action: 'dismissed',
          pull_request: { number: 3 },
          review: { id: 9, state: 'dismissed', user: { login: 'approver', type: 'User' } },
          sender: { login: 'maintainer', type: 'User' }
        })
      )
    )
    expect(req).toMatchObject({ kind: 'recheck', pullNumber: 3, actor: { login: 'maintainer' } })
  })
})
