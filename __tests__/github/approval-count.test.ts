import {
  approvalRules,
  countApproval,
  tallyDescription,
  tallyOf
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
const fresh = (protectedChanged = false): Tally => ({
  approvers: [],
  protectedChanged,
  acknowledged: false
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

describe('counting approvals', () => {
  const rules = (required: number, protectedApprovers: string[] = []) => ({
    required,
    protectedApprovers
  })

  test('with required-approvals: 2 one approval is not enough; a second person turns it green', () => {
    const first = countApproval(fresh(), rules(2), person('alice'))
    expect(first).toMatchObject({ done: false, counted: true })
    expect(first.done ? '' : first.reason).toMatch(/1 of 2 required approvals/)
    // The same person again does not count twice.
    const again = countApproval(first.tally, rules(2), person('Alice'))
    expect(again).toMatchObject({ done: false, counted: false })
    expect(again.done ? '' : again.reason).toMatch(/already approved/)
    expect(countApproval(first.tally, rules(2), person('bob'))).toMatchObject({ done: true })
  })

  test('the author never counts toward more than one approval', () => {
    const r = countApproval(fresh(), rules(2), person('carol', { author: true }))
    expect(r).toMatchObject({ done: false, counted: false })
    expect(r.tally.approvers).toEqual([])
  })

  test('a protected change stays pending after a plain approval, with the reason; the acknowledged one turns it green', () => {
    const plain = countApproval(fresh(true), rules(1), person('alice'))
    expect(plain.done).toBe(false)
    expect(plain.done ? '' : plain.reason).toMatch(/`\/airlock approve 1a2b3c4d5e6f protected`/)
    expect(
      countApproval(plain.tally, rules(1), person('alice', { acknowledges: true }))
    ).toMatchObject({ done: true })
    expect(
      countApproval(fresh(true), rules(1), person('bob', { acknowledges: true }))
    ).toMatchObject({ done: true })
  })

  test('with protected-approvers, only theirs acknowledges a protected change', () => {
    const named = rules(1, ['sec-lead'])
    const other = countApproval(fresh(true), named, person('alice', { acknowledges: true }))
    expect(other.done ? '' : other.reason).toMatch(/protected-approvers \(sec-lead\)/)
    expect(
      countApproval(fresh(true), named, person('sec-lead', { protectedApprover: true }))
    ).toMatchObject({ done: true })
  })

  test('the tally round-trips through the gate description, within 140 characters', () => {
    const long = 'a'.repeat(39)
    const t: Tally = {
      approvers: [long, `b${long.slice(1)}`],
      protectedChanged: true,
      acknowledged: true
    }
    const text = tallyDescription(t, 3, SHORT)
    expect(text.length).toBeLessThanOrEqual(140)
    expect(tallyOf(text, SHORT)).toEqual(t)
    // For another diff, or in an unknown form, nobody is counted.
    expect(tallyOf(text, 'cd'.repeat(6)).approvers).toEqual([])
    expect(tallyOf('approved by @x for diff 0', SHORT)).toEqual(fresh())
  })

  test('the pending gate of a protected change says so, and approve reads it back', () => {
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
    const plain = gateAfterRun(report, [], 'airlock/approval')
    expect(tallyOf(plain.description, SHORT).protectedChanged).toBe(false)
    const guarded = gateAfterRun(report, [], 'airlock/approval', undefined, true)
    expect(guarded.description).toBe(`awaiting approval of diff ${SHORT}; protected paths changed`)
    expect(tallyOf(guarded.description, SHORT).protectedChanged).toBe(true)
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
