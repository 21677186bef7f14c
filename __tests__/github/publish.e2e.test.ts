import * as fs from 'node:fs'
import * as path from 'node:path'
import { ACTIONS_BOT } from '../../__fixtures__/github-stand-in.js'
import {
  PEOPLE,
  PR_NUMBER,
  README_PATCH,
  TOKEN,
  publish,
  webhook,
  closeWorld,
  makeWorld,
  runAction,
  writeRunFolder
} from '../../__fixtures__/action-harness.js'
import type { World } from '../../__fixtures__/action-harness.js'

let world: World
beforeEach(async () => {
  world = await makeWorld()
})
afterEach(async () => {
  await closeWorld(world)
})

function ownReviews(): typeof world.api.reviews {
  return world.api.reviews.filter((r) => r.user.login === ACTIONS_BOT.login)
}

function gate(sha: string): { state: string; description: string | null }[] {
  return world.api.statuses.filter((s) => s.sha === sha && s.context === 'airlock/approval')
}

describe('publish: the sticky review and the gate', () => {
  test('posts one COMMENT review on the head commit and a pending gate; re-publishing updates it in place', async () => {
    const report = writeRunFolder(world.out, {
      runId: '100-1',
      headSha: world.base,
      patch: README_PATCH
    })
    const first = await publish(world)
    expect(first.code).toBe(0)
    expect(ownReviews()).toHaveLength(1)
    const [review] = ownReviews()
    expect(review.state).toBe('COMMENTED')
    expect(review.commit_id).toBe(world.base)
    expect(review.body).toContain(
      `<!-- airlock:report {"runId":"100-1","headSha":"${world.base}","diffSha256":"${report.diff.sha256}","protected":false} -->`
    )
    expect(gate(world.base)).toEqual([
      expect.objectContaining({
        state: 'pending',
        description: `awaiting approval of diff ${report.diff.sha256?.slice(0, 12)}`
      })
    ])
    expect(first.outputs['comment-url']).toContain(`#pullrequestreview-${review.id}`)
    expect(first.outputs['gate-state']).toBe('pending')

    // The same evidence again (run, head and diff), rendered differently: same review, new body,
    // no second review. (comment.md is never read: the review is rendered from report.json.)
    const file = path.join(world.out, 'report.json')
    const edited = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof report
    edited.outcomeReason = 'edited'
    fs.writeFileSync(file, JSON.stringify(edited))
    const second = await publish(world)
    expect(second.code).toBe(0)
    expect(ownReviews()).toHaveLength(1)
    expect(ownReviews()[0].id).toBe(review.id)
    expect(ownReviews()[0].body).toContain('edited')
    expect(
      world.api
        .writes()
        .filter(
          (w) =>
            w.route?.includes('/reviews') && w.method === 'POST' && w.route.endsWith('/reviews')
        )
    ).toHaveLength(1)
  })

  test('a newer run gets its own review and marks the earlier one superseded', async () => {
    writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch: README_PATCH })
    expect((await publish(world)).code).toBe(0)
    const head2 = world.api.push('feature')
    const out2 = path.join(world.workspace, 'out2')
    const report2 = writeRunFolder(out2, {
      runId: '101-1',
      headSha: head2,
      patch: README_PATCH + ' '
    })
    expect((await publish(world, {}, out2)).code).toBe(0)
    const [old, current] = ownReviews()
    expect(ownReviews()).toHaveLength(2)
    expect(old.body).toContain('Superseded by run `101-1`')
    expect(old.body).toContain('<!-- airlock:superseded -->')
    expect(current.body).not.toContain('Superseded')
    expect(current.commit_id).toBe(head2)
    expect(gate(head2)[0]).toMatchObject({
      state: 'pending',
      description: `awaiting approval of diff ${report2.diff.sha256?.slice(0, 12)}`
    })
  })

  test('a marker planted by someone else is ignored and left alone', async () => {
    const report = writeRunFolder(world.out, {
      runId: '100-1',
      headSha: world.base,
      patch: README_PATCH
    })
    const planted = `looks official\n<!-- airlock:report {"runId":"100-1","headSha":"${world.base}","diffSha256":"${report.diff.sha256}"} -->`
    world.api.reviews.push({
      id: 5,
      pull: PR_NUMBER,
      user: PEOPLE.mallory,
      body: planted,
      state: 'COMMENTED',
      commit_id: world.base
    })
    const run = await publish(world)
    expect(run.code).toBe(0)
    expect(world.api.reviews.find((r) => r.id === 5)?.body).toBe(planted)
    expect(ownReviews()).toHaveLength(1)
    expect(world.api.writes().some((w) => w.path.endsWith('/reviews/5'))).toBe(false)
  })

  test('two publishers racing on the same run leave exactly one review', async () => {
    writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch: README_PATCH })
    // Both read the (empty) list of reviews before either posts.
    world.api.barrier = {
      method: 'GET',
      route: '/repos/{owner}/{repo}/pulls/{pull_number}/reviews',
      count: 2,
      waiting: []
    }
    const [a, b] = await Promise.all([publish(world), publish(world)])
    expect([a.code, b.code]).toEqual([0, 0])
    expect(world.api.reviews.filter((r) => r.state === 'PENDING')).toEqual([])
    expect(ownReviews()).toHaveLength(1)
    expect(ownReviews()[0].state).toBe('COMMENTED')
    // The loser of the race was told "one pending review per user" and joined the winner's.
    expect(
      world.api.requests
        .filter((r) => r.route?.endsWith('/reviews') && r.method === 'POST')
        .map((r) => r.status)
        .sort()
    ).toEqual([200, 422])
  })

  test('a POST that succeeded but whose answer was lost is retried without a duplicate', async () => {
    writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch: README_PATCH })
    world.api.faults.push({
      method: 'POST',
      route: '/repos/{owner}/{repo}/pulls/{pull_number}/reviews',
      status: 502,
      times: 1,
      afterSuccess: true
    })
    const run = await publish(world)
    expect(run.code).toBe(0)
    expect(ownReviews()).toHaveLength(1)
    expect(ownReviews()[0].state).toBe('COMMENTED')
    const posts = world.api.requests.filter(
      (r) => r.route?.endsWith('/reviews') && r.method === 'POST'
    )
    expect(posts.map((r) => r.status)).toEqual([502, 422])
  })

  test('a policy violation turns the gate red at once', async () => {
    writeRunFolder(world.out, {
      runId: '100-1',
      headSha: world.base,
      patch: README_PATCH,
      outcome: 'policy-violation',
      violations: [{ rule: 'protected-path', path: '.github/workflows/ci.yml', detail: 'changed' }]
    })
    expect((await publish(world)).code).toBe(0)
    expect(gate(world.base)).toEqual([expect.objectContaining({ state: 'failure' })])
    expect(gate(world.base)[0].description).toContain('policy-violation (protected-path)')
  })

  test('an invalid report is refused before any write', async () => {
    writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch: README_PATCH })
    const file = path.join(world.out, 'report.json')
    fs.writeFileSync(
      file,
      JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), schemaVersion: 2 })
    )
    const run = await publish(world)
    expect(run.code).toBe(1)
    expect(run.stdout).toContain(
      '::error title=Agent Airlock%3A refused::invalid run evidence: schemaVersion 2 is not supported'
    )
    expect(world.api.requests).toEqual([])
  })

  test('a tampered diff.patch (hash mismatch) is refused', async () => {
    writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch: README_PATCH })
    fs.appendFileSync(path.join(world.out, 'diff.patch'), '+sneaky\n')
    const run = await publish(world)
    expect(run.code).toBe(1)
    expect(run.stdout).toContain('diff.patch does not match')
    expect(world.api.writes()).toEqual([])
  })

  test('a report for an old head is stale: nothing is published', async () => {
    writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch: README_PATCH })
    world.api.push('feature')
    const run = await publish(world)
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('stale evidence is not published')
    expect(world.api.writes()).toEqual([])
  })
})

describe('dry-run', () => {
  test('computes the exact payloads and makes zero write calls', async () => {
    const report = writeRunFolder(world.out, {
      runId: '100-1',
      headSha: world.base,
      patch: README_PATCH
    })
    const run = await publish(world, { 'dry-run': 'true' })
    expect(run.code).toBe(0)
    expect(world.api.requests.length).toBeGreaterThan(0)
    expect(world.api.writes()).toEqual([])
    const record = JSON.parse(fs.readFileSync(path.join(world.out, 'dry-run.json'), 'utf8')) as {
      writes: { route: string; params: Record<string, unknown> }[]
    }
    const routes = record.writes.map((w) => w.route)
    expect(routes).toEqual([
      'POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews',
      'POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/events',
      'POST /repos/{owner}/{repo}/statuses/{sha}'
    ])
    expect(record.writes[0].params.body).toContain('<!-- airlock:report {"runId":"100-1"')
    expect(record.writes[1].params.event).toBe('COMMENT')
    expect(record.writes[2].params).toMatchObject({
      sha: world.base,
      state: 'pending',
      context: 'airlock/approval',
      description: `awaiting approval of diff ${report.diff.sha256?.slice(0, 12)}`
    })
    expect(run.summary).toContain('dry run (nothing was sent)')
    expect(run.summary).toContain('POST /repos/{owner}/{repo}/statuses/{sha}')
  })
})

describe('the client: retries, errors, rate limits', () => {
  test('502 then success is retried', async () => {
    writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch: README_PATCH })
    world.api.faults.push({
      method: 'POST',
      route: '/repos/{owner}/{repo}/statuses/{sha}',
      status: 502,
      times: 1
    })
    const run = await publish(world)
    expect(run.code).toBe(0)
    const posts = world.api.requests.filter(
      (r) => r.route === 'POST /repos/{owner}/{repo}/statuses/{sha}'
    )
    expect(posts.map((r) => r.status)).toEqual([502, 201])
    expect(gate(world.base)).toHaveLength(1)
  })

  test('422 is not retried and is reported clearly', async () => {
    writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch: README_PATCH })
    world.api.faults.push({
      method: 'POST',
      route: '/repos/{owner}/{repo}/statuses/{sha}',
      status: 422,
      times: 5,
      message: 'Validation Failed'
    })
    const run = await publish(world)
    expect(run.code).toBe(1)
    const posts = world.api.requests.filter(
      (r) => r.route === 'POST /repos/{owner}/{repo}/statuses/{sha}'
    )
    expect(posts).toHaveLength(1)
    expect(run.stdout).toMatch(
      /::error title=Agent Airlock%3A refused::GitHub answered 422 to POST \S+\/statuses\/[0-9a-f]{40}: Validation Failed \(GitHub rejected the request as invalid\)/
    )
  })

  test('a secondary rate limit is waited out as retry-after says', async () => {
    writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch: README_PATCH })
    world.api.faults.push({
      method: 'POST',
      route: '/repos/{owner}/{repo}/statuses/{sha}',
      status: 403,
      times: 1,
      headers: { 'retry-after': '1' },
      message:
        'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.'
    })
    const run = await publish(world)
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('secondary rate limit on POST')
    expect(run.stdout).toContain('waiting 1 s as GitHub asks')
    const posts = world.api.requests.filter(
      (r) => r.route === 'POST /repos/{owner}/{repo}/statuses/{sha}'
    )
    expect(posts.map((r) => r.status)).toEqual([403, 201])
  })
})

describe('events without a pull request', () => {
  test('publish on workflow_dispatch publishes nothing', async () => {
    writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch: README_PATCH })
    const run = await runAction({
      inputs: { mode: 'publish', 'github-token': TOKEN, 'output-dir': world.out },
      eventName: 'workflow_dispatch',
      payload: webhook('workflow_dispatch', undefined, () => undefined),
      apiUrl: world.api.url,
      workspace: world.workspace
    })
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('has no pull request')
    expect(world.api.requests).toEqual([])
  })
})
