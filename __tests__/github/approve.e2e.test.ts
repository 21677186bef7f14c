import * as fs from 'node:fs'
import * as path from 'node:path'
import {
  PEOPLE,
  PR_NUMBER,
  README_PATCH,
  TOKEN,
  publish,
  webhook,
  closeWorld,
  commentEvent,
  makeWorld,
  runAction,
  saveWorld,
  writeRunFolder
} from '../../__fixtures__/action-harness.js'
import type { ActionRun, World } from '../../__fixtures__/action-harness.js'
import { ACTIONS_BOT } from '../../__fixtures__/github-stand-in.js'
import type { User } from '../../__fixtures__/github-stand-in.js'

/**
 * One world for the file: its repository, the running stand-in and the run published into it
 * (the pending gate and the review with the report marker). Before each test the world goes back
 * to what it was right after that publish (saveWorld), so each test starts where a fresh world
 * with one publish would, in any order.
 */

/** The action's replies on the pull request (the people's own comments left out). */
function replies(): { body: string }[] {
  return world.api.comments.filter((c) => c.user.login === ACTIONS_BOT.login)
}
let published: World
let restore: () => void
let publishedDiff: string
let world: World
let diff: string

beforeAll(async () => {
  published = await makeWorld()
  const report = writeRunFolder(published.out, {
    runId: '100-1',
    headSha: published.base,
    patch: README_PATCH
  })
  publishedDiff = report.diff.sha256 as string
  const run = await publish(published)
  expect(run.code).toBe(0)
  restore = saveWorld(published)
})
afterAll(async () => {
  await published?.close()
})
beforeEach(() => {
  restore()
  world = published
  diff = publishedDiff
})
afterEach(async () => {
  if (world !== published) await closeWorld(world)
  expect(published.api.violations).toEqual([])
})

function reviewEvent(user: User, commitId: string, state = 'approved'): Record<string, unknown> {
  return webhook('pull_request_review', 'submitted', (p) => {
    p.pull_request.number = PR_NUMBER
    p.pull_request.head.sha = commitId
    p.review.state = state
    p.review.commit_id = commitId
    p.review.submitted_at = new Date().toISOString()
    p.review.body = null
    p.review.user.login = user.login
    p.review.user.type = user.type
  })
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

function gate(sha: string): { state: string; description: string | null }[] {
  return world.api.statuses.filter((s) => s.sha === sha && s.context === 'airlock/approval')
}

/** Refused: the gate keeps its last state and one escaped reply says why. */
function expectRefused(run: ActionRun, reason: RegExp): void {
  expect(run.code).toBe(0)
  expect(run.outputs.approved).toBe('false')
  expect(gate(world.base).map((s) => s.state)).toEqual(['pending'])
  expect(replies()).toHaveLength(1)
  expect(replies()[0].body).toMatch(/^Agent Airlock: approval not recorded: /)
  expect(replies()[0].body).toMatch(reason)
  // No live mention in the reply.
  expect(replies()[0].body).not.toMatch(/@[A-Za-z]/)
}

describe('approve', () => {
  test('a writer commenting /airlock approve <prefix> turns the gate green, naming who and what', async () => {
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 10)}`)
    )
    expect(run.code).toBe(0)
    expect(run.outputs.approved).toBe('true')
    expect(gate(world.base).map((s) => s.state)).toEqual(['pending', 'success'])
    expect(gate(world.base)[1].description).toBe(
      `approved by @${PEOPLE.writer.login} for diff ${diff.slice(0, 12)}`
    )
    expect(replies()).toEqual([])
  })

  test('re-publishing an approved run keeps the gate green; a new run makes it pending again', async () => {
    await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    )
    expect((await publish(world)).code).toBe(0)
    expect(gate(world.base).map((s) => s.state)).toEqual(['pending', 'success'])
    writeRunFolder(world.out, { runId: '100-2', headSha: world.base, patch: README_PATCH })
    expect((await publish(world)).code).toBe(0)
    expect(gate(world.base).map((s) => s.state)).toEqual(['pending', 'success', 'pending'])
  })

  test('a maintainer approving the current head with a review turns the gate green', async () => {
    const run = await approve('pull_request_review', reviewEvent(PEOPLE.maintainer, world.base))
    expect(run.code).toBe(0)
    expect(gate(world.base).map((s) => s.state)).toEqual(['pending', 'success'])
  })

  test('a reader is refused', async () => {
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.reader, `/airlock approve ${diff.slice(0, 12)}`)
    )
    expectRefused(run, /has read permission; approving needs write, maintain or admin/)
  })

  test('the author is refused unless self-approval is allowed', async () => {
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.author, `/airlock approve ${diff.slice(0, 12)}`)
    )
    expectRefused(run, /opened this pull request; someone else must approve/)
  })

  test('the author may approve with allow-self-approval', async () => {
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.author, `/airlock approve ${diff.slice(0, 12)}`),
      { 'allow-self-approval': 'true' }
    )
    expect(run.outputs.approved).toBe('true')
    expect(gate(world.base).map((s) => s.state)).toEqual(['pending', 'success'])
  })

  test('a bot is refused, even with write permission', async () => {
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.bot, `/airlock approve ${diff.slice(0, 12)}`)
    )
    expectRefused(run, /is a bot; only people can approve/)
  })

  test('someone who is no collaborator is refused', async () => {
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.mallory, `/airlock approve ${diff.slice(0, 12)}`)
    )
    expectRefused(run, /is not a collaborator/)
  })

  test('a review approving an old head SHA is refused', async () => {
    const newHead = world.api.push('feature')
    const run = await approve('pull_request_review', reviewEvent(PEOPLE.writer, world.base))
    expectRefused(run, /submitted on [0-9a-f]{12}, but the head is now/)
    expect(gate(newHead)).toEqual([])
  })

  test('approving after a push, before the new run reported, is refused (stale report)', async () => {
    const newHead = world.api.push('feature')
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    )
    expectRefused(run, /the latest report is for [0-9a-f]{12}, but the head is now/)
    expect(gate(newHead)).toEqual([])
  })

  test('a wrong diff prefix is refused', async () => {
    const wrong = diff.startsWith('0') ? '1111111' : '0000000'
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${wrong}`)
    )
    expectRefused(run, /diff 0000000|diff 1111111/)
  })

  test('a command without a prefix is refused with the prefix to use', async () => {
    const run = await approve('issue_comment', commentEvent(PEOPLE.writer, '/airlock approve'))
    expectRefused(run, new RegExp(`airlock approve ${diff.slice(0, 12)}`))
  })

  test("a marker planted in someone else's review does not count as the latest report", async () => {
    // Mallory posts a "report" for a diff of her choosing; approvals must still name the real one.
    const fake = 'f'.repeat(64)
    world.api.reviews.push({
      id: 99999,
      pull: PR_NUMBER,
      user: PEOPLE.mallory,
      body: `<!-- airlock:report {"runId":"666-1","headSha":"${world.base}","diffSha256":"${fake}"} -->`,
      state: 'COMMENTED',
      commit_id: world.base
    })
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${fake.slice(0, 12)}`)
    )
    expectRefused(run, /is not the latest report's diff/)
  })

  test('a gate that failed (policy violation) cannot be approved', async () => {
    world.api.statuses.push({
      id: 1,
      sha: world.base,
      state: 'failure',
      context: 'airlock/approval',
      description: 'policy-violation (protected-path): not approvable',
      target_url: null,
      creator: { login: 'github-actions[bot]', id: 41898282, type: 'Bot' }
    })
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    )
    expect(run.outputs.approved).toBe('false')
    expect(gate(world.base).map((s) => s.state)).toEqual(['pending', 'failure'])
    expect(replies()[0].body).toMatch(/only a pending gate for this diff can be approved/)
  })

  test('other comments and non-approving reviews do nothing at all', async () => {
    const before = world.api.requests.length
    const a = await approve('issue_comment', commentEvent(PEOPLE.writer, 'looks good to me'))
    const b = await approve(
      'pull_request_review',
      reviewEvent(PEOPLE.writer, world.base, 'commented')
    )
    expect([a.code, b.code]).toEqual([0, 0])
    expect(world.api.requests.length).toBe(before)
  })

  test('dry-run decides but writes nothing', async () => {
    const before = world.api.writes().length
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`),
      { 'dry-run': 'true', 'output-dir': world.out }
    )
    expect(run.outputs.approved).toBe('true')
    expect(world.api.writes().length).toBe(before)
    expect(gate(world.base).map((s) => s.state)).toEqual(['pending'])
    expect(run.summary).toContain('POST /repos/{owner}/{repo}/statuses/{sha}')
  })
})

describe('approve under the policy file of the base commit', () => {
  /** A world of its own (closed after the test), with `policy` on the base commit, published. */
  async function worldWithPolicy(policy: string): Promise<void> {
    world = await makeWorld({ 'README.md': 'hello\n', '.github/airlock.yml': policy })
    const report = writeRunFolder(world.out, {
      runId: '200-1',
      headSha: world.base,
      patch: README_PATCH
    })
    diff = report.diff.sha256 as string
    expect((await publish(world)).code).toBe(0)
  }

  test('only the approvers it names may approve', async () => {
    await worldWithPolicy(`approvers: [${PEOPLE.maintainer.login}]\n`)
    const writer = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 10)}`)
    )
    expectRefused(writer, /not one of the approvers named in \.github\/airlock\.yml/)
    const maintainer = await approve(
      'pull_request_review',
      reviewEvent(PEOPLE.maintainer, world.base)
    )
    expect(maintainer.outputs.approved).toBe('true')
    expect(gate(world.base).map((s) => s.state)).toEqual(['pending', 'success'])
  })

  test('its allow-self-approval lets the author approve, and an explicit input overrides it', async () => {
    await worldWithPolicy('allow-self-approval: true\n')
    const overridden = await approve(
      'issue_comment',
      commentEvent(PEOPLE.author, `/airlock approve ${diff.slice(0, 10)}`),
      { 'allow-self-approval': 'false' }
    )
    expectRefused(overridden, /opened this pull request/)
    const allowed = await approve(
      'issue_comment',
      commentEvent(PEOPLE.author, `/airlock approve ${diff.slice(0, 10)}`)
    )
    expect(allowed.outputs.approved).toBe('true')
  })

  test('an invalid policy file refuses every approval (fail-closed)', async () => {
    await worldWithPolicy('aprovers: [someone]\n')
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 10)}`)
    )
    expectRefused(run, /policy file at the base commit cannot be used/)
  })
})

describe('approve checks the evidence it is handed (output-dir) against its provenance statement', () => {
  test('a changed byte in any bound file, or no provenance.json, is refused: exit 1, the gate stays pending', async () => {
    const saved = path.join(world.root, 'saved-out')
    fs.cpSync(world.out, saved, { recursive: true })
    const statement = JSON.parse(
      fs.readFileSync(path.join(world.out, 'provenance.json'), 'utf8')
    ) as { predicate: { files: { path: string }[] } }
    const bound = statement.predicate.files.map((f) => f.path)
    expect(bound).toEqual(expect.arrayContaining(['report.json', 'diff.patch', 'comment.md']))
    const tampers: [string, () => void][] = [
      ...bound.map((f): [string, () => void] => [
        f,
        () => fs.appendFileSync(path.join(world.out, f), ' ')
      ]),
      ['a file added', () => fs.writeFileSync(path.join(world.out, 'extra.txt'), 'x')],
      ['no provenance.json', () => fs.rmSync(path.join(world.out, 'provenance.json'))]
    ]
    for (const [what, tamper] of tampers) {
      fs.rmSync(world.out, { recursive: true, force: true })
      fs.cpSync(saved, world.out, { recursive: true })
      tamper()
      const run = await approve(
        'issue_comment',
        commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`),
        { 'output-dir': world.out }
      )
      expect([what, run.code]).toEqual([what, 1])
      expect(run.stdout).toContain('the evidence does not match its provenance.json')
    }
    expect(gate(world.base).map((s) => s.state)).toEqual(['pending'])
  })

  test('evidence of another run than the latest report is refused with the reason', async () => {
    writeRunFolder(world.out, { runId: '100-9', headSha: world.base, patch: README_PATCH })
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`),
      { 'output-dir': world.out }
    )
    expectRefused(run, /is not the latest report's evidence/)
  })

  test('output-dir as the runner hands it by default (airlock-out), with no evidence downloaded: decided on the review and status, approved', async () => {
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`),
      { 'output-dir': path.join(world.root, 'airlock-out') }
    )
    expect([run.code, run.outputs.approved]).toEqual([0, 'true'])
    expect(gate(world.base).map((s) => s.state)).toEqual(['pending', 'success'])
  })

  test('output-dir naming a file fails the step with an error naming the input', async () => {
    const file = path.join(world.root, 'not-a-folder')
    fs.writeFileSync(file, 'x')
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`),
      { 'output-dir': file }
    )
    expect(run.code).toBe(1)
    expect(run.stdout).toMatch(
      /::error title=Agent Airlock%3A configuration::output-dir: .*is not a folder/
    )
    expect(gate(world.base).map((s) => s.state)).toEqual(['pending'])
  })

  test('matching evidence in output-dir: approved', async () => {
    const run = await approve(
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`),
      { 'output-dir': world.out }
    )
    expect(run.outputs.approved).toBe('true')
    expect(gate(world.base).map((s) => s.state)).toEqual(['pending', 'success'])
  })
})
