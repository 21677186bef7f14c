/**
 * The decision is rebuilt from the record every time: the reviews and `/airlock approve`
 * comments on the pull request since the report, each approver's permission now, the latest of
 * each person's actions, and the protected changes the report itself states. Nothing is read
 * back from the gate's status description, which anyone with `statuses: write` can write. The
 * bundled action against the OpenAPI-checked stand-in, with a real git repository behind it.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import {
  PEOPLE,
  PR_NUMBER,
  README_PATCH,
  TOKEN,
  closeWorld,
  commentEvent,
  makeWorld,
  publish,
  runAction,
  webhook,
  writeRunFolder
} from '../../__fixtures__/action-harness.js'
import type { ActionRun, World } from '../../__fixtures__/action-harness.js'
import type { User } from '../../__fixtures__/github-stand-in.js'
import { renderComment } from '../../src/report/comment.js'
import { PROVENANCE_FILE, buildStatement } from '../../src/report/provenance.js'
import type { Report } from '../../src/report/report.js'

let world: World | undefined
let diff: string
let head: string

afterEach(async () => {
  if (world !== undefined) await closeWorld(world)
  world = undefined
})

function w(): World {
  if (world === undefined) throw new Error('no world')
  return world
}

/** A world with `policy` on the base commit, and run `runId` published on it. */
async function published(
  policy: string | undefined,
  o: { protectedChange?: boolean } = {}
): Promise<void> {
  world = await makeWorld({
    'README.md': 'hello\n',
    ...(policy !== undefined ? { '.github/airlock.yml': policy } : {})
  })
  head = world.base
  const report = writeRunFolder(world.out, { runId: '700-1', headSha: head, patch: README_PATCH })
  if (o.protectedChange === true) markProtected(world.out, report)
  diff = report.diff.sha256 as string
  expect((await publish(world)).code).toBe(0)
  expect(gate()).toEqual(['pending'])
}

/** The run changed a protected path (README.md): report.json says so, provenance re-bound. */
function markProtected(dir: string, report: Report): void {
  const changed: Report = {
    ...report,
    policy: {
      ...report.policy,
      protectedPaths: ['README.md'],
      protected: [{ rule: 'protected-path', path: 'README.md', detail: 'matches README.md' }]
    }
  }
  fs.writeFileSync(path.join(dir, 'report.json'), JSON.stringify(changed, null, 2) + '\n')
  fs.writeFileSync(path.join(dir, 'comment.md'), renderComment(changed, README_PATCH))
  fs.writeFileSync(
    path.join(dir, PROVENANCE_FILE),
    JSON.stringify(buildStatement(dir), null, 2) + '\n'
  )
}

/** approve mode; `evidence: false` runs it without the run's evidence (no output-dir folder). */
function approve(
  eventName: string,
  payload: Record<string, unknown>,
  o: { evidence?: boolean } = {}
): Promise<ActionRun> {
  return runAction({
    inputs: {
      mode: 'approve',
      'github-token': TOKEN,
      ...(o.evidence === false ? { 'output-dir': 'no-evidence-here' } : {})
    },
    eventName,
    payload,
    apiUrl: w().api.url,
    workspace: w().workspace
  })
}

/** `user` submits a review in `state` on the head; the event that announces it. */
function review(user: User, state: 'approved' | 'changes_requested'): Record<string, unknown> {
  return webhook('pull_request_review', 'submitted', (p) => {
    p.pull_request.number = PR_NUMBER
    p.pull_request.head.sha = head
    p.review.state = state
    p.review.commit_id = head
    p.review.submitted_at = new Date().toISOString()
    p.review.body = null
    p.review.user.login = user.login
    p.review.user.type = user.type
  })
}

const approveComment = (user: User, words = ''): Record<string, unknown> =>
  commentEvent(user, `/airlock approve ${diff.slice(0, 12)}${words}`)

function gate(): string[] {
  return w()
    .api.statuses.filter((s) => s.sha === head && s.context === 'airlock/approval')
    .map((s) => s.state)
}

function lastDescription(): string {
  const mine = w().api.statuses.filter((s) => s.sha === head && s.context === 'airlock/approval')
  return mine.at(-1)?.description ?? ''
}

const lastReply = (): string => w().api.comments.at(-1)?.body ?? ''

/** A pause so that what follows carries a later time stamp than what came before. */
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 20))

describe('1. the latest of each person’s actions counts: a withdrawn approval does not', () => {
  test('required-approvals 2: a writer approves, then requests changes; a second approval does not turn the gate green', async () => {
    await published('required-approvals: 2\n')
    expect((await approve('issue_comment', approveComment(PEOPLE.writer))).code).toBe(0)
    expect(gate().at(-1)).toBe('pending')
    expect(lastDescription()).toMatch(/^approvals 1\/2 by @writer-wendy for diff /)
    await tick()
    await approve('pull_request_review', review(PEOPLE.writer, 'changes_requested'))
    expect(gate().at(-1)).toBe('pending')
    await tick()
    const second = await approve('pull_request_review', review(PEOPLE.maintainer, 'approved'))
    expect(second.outputs.approved).toBe('false')
    expect(gate().at(-1)).toBe('pending')
    expect(gate()).not.toContain('success')
    expect(lastReply()).toMatch(/@\u2060?writer-wendy requested changes/)
    // The writer approves again: now two people's latest actions approve.
    await tick()
    const again = await approve('issue_comment', approveComment(PEOPLE.writer))
    expect(again.outputs.approved).toBe('true')
    expect(gate().at(-1)).toBe('success')
  })

  test("a writer's request for changes blocks the gate until that writer approves, whoever else approves", async () => {
    await published(undefined)
    await approve('pull_request_review', review(PEOPLE.writer, 'changes_requested'))
    await tick()
    const run = await approve('issue_comment', approveComment(PEOPLE.maintainer))
    expect(run.outputs.approved).toBe('false')
    expect(gate()).not.toContain('success')
  })
})

describe('2. only approvers who can write now count', () => {
  test('a counted approver reduced to read no longer counts toward required-approvals', async () => {
    await published('required-approvals: 2\n')
    expect((await approve('issue_comment', approveComment(PEOPLE.writer))).code).toBe(0)
    expect(lastDescription()).toMatch(/^approvals 1\/2 by @writer-wendy/)
    w().api.permissions.set(PEOPLE.writer.login, 'read')
    await tick()
    const second = await approve('pull_request_review', review(PEOPLE.maintainer, 'approved'))
    expect(second.outputs.approved).toBe('false')
    expect(gate()).not.toContain('success')
    expect(lastDescription()).toMatch(/^approvals 1\/2 by @maint-mo for diff /)
    expect(lastReply()).toMatch(/1 of 2 required approvals/)
    // Another writer's approval completes it.
    w().api.permissions.set(PEOPLE.mallory.login, 'write')
    await tick()
    const third = await approve('issue_comment', approveComment(PEOPLE.mallory))
    expect(third.outputs.approved).toBe('true')
    expect(gate().at(-1)).toBe('success')
  })
})

describe('3. the protected change is the report’s, never the status text’s', () => {
  test('acknowledged, withdrawn, then a plain approval without the evidence: the gate stays pending', async () => {
    await published(undefined, { protectedChange: true })
    const acknowledged = await approve(
      'issue_comment',
      approveComment(PEOPLE.writer, ' protected'),
      {
        evidence: false
      }
    )
    expect(acknowledged.outputs.approved).toBe('true')
    expect(gate().at(-1)).toBe('success')
    await tick()
    await approve('pull_request_review', review(PEOPLE.writer, 'changes_requested'), {
      evidence: false
    })
    expect(gate().at(-1)).toBe('pending')
    await tick()
    const plain = await approve('issue_comment', approveComment(PEOPLE.writer), { evidence: false })
    expect(plain.outputs.approved).toBe('false')
    expect(gate().at(-1)).toBe('pending')
    expect(lastReply()).toMatch(/touches protected paths/)
  })

  test('a plain approval of a protected change is not enough, with or without the evidence', async () => {
    await published(undefined, { protectedChange: true })
    for (const evidence of [false, true]) {
      const run = await approve('issue_comment', approveComment(PEOPLE.writer), { evidence })
      expect(run.outputs.approved).toBe('false')
      await tick()
    }
    expect(gate()).not.toContain('success')
  })
})

describe('the status text is never read back', () => {
  test('a pending status written by anyone with statuses: write, claiming an earlier approval, counts nobody', async () => {
    await published('required-approvals: 2\n')
    // A workflow of the repository posts with the same identity the action uses (GITHUB_TOKEN).
    const forged = await fetch(`${w().api.url}/repos/octo-org/hello/statuses/${head}`, {
      method: 'POST',
      headers: { authorization: `token ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        state: 'pending',
        context: 'airlock/approval',
        description: `approvals 1/2 by @maint-mo for diff ${diff.slice(0, 12)}`
      })
    })
    expect(forged.status).toBe(201)
    await tick()
    const run = await approve('issue_comment', approveComment(PEOPLE.writer))
    expect(run.outputs.approved).toBe('false')
    expect(gate()).not.toContain('success')
    expect(lastDescription()).toMatch(/^approvals 1\/2 by @writer-wendy for diff /)
  })
})

describe('a dismissed approving review', () => {
  test('withdraws that approval: the gate goes back to pending', async () => {
    await published(undefined)
    const approving = review(PEOPLE.maintainer, 'approved')
    expect((await approve('pull_request_review', approving)).outputs.approved).toBe('true')
    expect(gate().at(-1)).toBe('success')
    const id = (approving.review as { id: number }).id
    const stored = w().api.reviews.find((r) => r.id === id)
    if (stored === undefined) throw new Error('the review is not in the stand-in')
    stored.state = 'DISMISSED'
    const dismissed = webhook('pull_request_review', 'dismissed', (p) => {
      p.action = 'dismissed'
      p.pull_request.number = PR_NUMBER
      p.pull_request.head.sha = head
      p.review.id = id
      p.review.state = 'dismissed'
      p.review.commit_id = head
      p.review.user.login = PEOPLE.maintainer.login
      p.review.user.type = 'User'
      p.sender.login = PEOPLE.writer.login
    })
    const run = await approve('pull_request_review', dismissed)
    expect(run.code).toBe(0)
    expect(run.outputs.approved).toBe('false')
    expect(gate().at(-1)).toBe('pending')
    expect(lastDescription()).toMatch(/awaiting approval of diff/)
  })
})
