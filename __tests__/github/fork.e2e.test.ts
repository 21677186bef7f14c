/**
 * Fork pull requests and comment triggers: the workflow_run publisher finds the fork's pull
 * request by head repository and head commit (the event lists none) and posts the review and the
 * pending gate from the downloaded evidence; `/airlock run <task>` starts a run only for writers.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import {
  PEOPLE,
  PR_NUMBER,
  README_PATCH,
  TOKEN,
  closeWorld,
  runAction,
  writeRunFolder
} from '../../__fixtures__/action-harness.js'
import type { ActionRun, World } from '../../__fixtures__/action-harness.js'
import { ACTIONS_BOT } from '../../__fixtures__/github-stand-in.js'
import {
  COMMENT_ID,
  FORK_HEAD,
  FORK_PR,
  FORK_REPO,
  FORK_RUN,
  commandComment as comment,
  finishedRun,
  makeForkWorld
} from '../../__fixtures__/fork.js'

let world: World
beforeEach(async () => {
  world = await makeForkWorld()
})
afterEach(async () => {
  await closeWorld(world)
})

function run(
  mode: string,
  eventName: string,
  payload: Record<string, unknown>,
  outputDir = world.out
): Promise<ActionRun> {
  return runAction({
    inputs: { mode, 'github-token': TOKEN, 'output-dir': outputDir },
    eventName,
    payload,
    apiUrl: world.api.url,
    workspace: world.workspace
  })
}

/** The action's own comments (the stand-in also holds the command comment an event delivers). */
function replies(): { body: string }[] {
  return world.api.comments.filter(
    (c) => c.user.type === 'Bot' && c.body.startsWith('Agent Airlock')
  )
}

describe('the workflow_run publisher (fork pull requests)', () => {
  test("finds the fork's pull request by head repository and SHA and posts review and pending gate", async () => {
    const untrusted = path.join(world.root, 'runner-temp', 'untrusted')
    const report = writeRunFolder(untrusted, {
      runId: `${FORK_RUN}-1`,
      headSha: FORK_HEAD,
      patch: README_PATCH
    })
    fs.writeFileSync(path.join(untrusted, 'comment.md'), '<img src=x> forged\n')
    const res = await run('publish', 'workflow_run', finishedRun(FORK_REPO), untrusted)
    expect(res.code).toBe(0)
    const reviews = world.api.reviews.filter((r) => r.user.login === ACTIONS_BOT.login)
    expect(reviews).toHaveLength(1)
    expect(reviews[0]).toMatchObject({ pull: FORK_PR, commit_id: FORK_HEAD, state: 'COMMENTED' })
    expect(reviews[0].body).not.toContain('<img')
    expect(reviews[0].body).toContain(`/actions/runs/${FORK_RUN}`)
    expect(world.api.statuses).toEqual([
      expect.objectContaining({
        sha: FORK_HEAD,
        state: 'pending',
        description: `awaiting approval of diff ${report.diff.sha256?.slice(0, 12)}`
      })
    ])
  })

  test('evidence for another commit than the finished run is refused', async () => {
    writeRunFolder(world.out, { runId: `${FORK_RUN}-1`, headSha: world.base, patch: README_PATCH })
    const res = await run('publish', 'workflow_run', finishedRun(FORK_REPO))
    expect(res.code).not.toBe(0)
    expect(res.stdout).toContain(`but the finished run ${FORK_RUN} ran on`)
    expect(world.api.writes()).toEqual([])
  })

  test('the same SHA from another repository is not that pull request', async () => {
    writeRunFolder(world.out, { runId: `${FORK_RUN}-1`, headSha: FORK_HEAD, patch: README_PATCH })
    const res = await run('publish', 'workflow_run', finishedRun('eve/hello'))
    expect(res.code).toBe(0)
    expect(world.api.writes()).toEqual([])
  })
})

describe('/airlock run <task> comments', () => {
  test('a writer starts a run on the current head; the task is data; a reaction acknowledges', async () => {
    const task = 'fix the cart total; $(touch /tmp/pwned) `rm -rf /` "quotes"\nsecond line'
    const res = await run(
      'command',
      'issue_comment',
      comment(PEOPLE.writer, `/airlock run ${task}`)
    )
    expect(res.code).toBe(0)
    expect(res.outputs['run-requested']).toBe('true')
    expect(res.outputs.task).toBe(task)
    expect(res.outputs['head-sha']).toBe(world.base)
    expect(res.outputs['pull-request']).toBe(String(PR_NUMBER))
    expect(res.outputs.fork).toBe('false')
    expect(world.api.reactions).toEqual([
      { commentId: COMMENT_ID, content: 'rocket', user: ACTIONS_BOT.login }
    ])
    // One reply: the run is pinned to this head, and where to watch it.
    expect(replies().map((c) => c.body)).toEqual([
      expect.stringMatching(
        new RegExp(
          `run requested by @${PEOPLE.writer.login} on \`${world.base.slice(0, 12)}\`; a push after this does not change what runs`
        )
      )
    ])
  })

  test.each([
    ['a reader', PEOPLE.reader, 'created', PR_NUMBER, /has read permission/],
    ['a bot', PEOPLE.bot, 'created', PR_NUMBER, /is a bot/],
    ['an edited comment', PEOPLE.writer, 'edited', PR_NUMBER, /edited comment is not a command/]
  ])('%s is refused with the reason', async (_name, user, action, pull, reason) => {
    const res = await run(
      'command',
      'issue_comment',
      comment(user, '/airlock run do it', action, pull)
    )
    expect(res.code).toBe(0)
    expect(res.outputs['run-requested']).toBe('false')
    expect(world.api.reactions.map((r) => r.content)).toEqual(['confused'])
    expect(replies()).toHaveLength(1)
    expect(replies()[0].body).toMatch(reason)
    expect(replies()[0].body).not.toMatch(/@[A-Za-z]/)
  })

  test('a closed pull request is refused; a fork is marked as one', async () => {
    ;(world.api.pulls.get(PR_NUMBER) as { state: string }).state = 'closed'
    const closed = await run('command', 'issue_comment', comment(PEOPLE.writer, '/airlock run x'))
    expect(closed.outputs['run-requested']).toBe('false')
    expect(replies()[0].body).toMatch(/is not open/)
    const fork = await run(
      'command',
      'issue_comment',
      comment(PEOPLE.writer, '/airlock run x', 'created', FORK_PR)
    )
    expect(fork.outputs['run-requested']).toBe('true')
    expect(fork.outputs.fork).toBe('true')
    expect(fork.outputs['head-sha']).toBe(FORK_HEAD)
  })

  test('other comments do nothing at all', async () => {
    const res = await run(
      'command',
      'issue_comment',
      comment(PEOPLE.writer, 'please /airlock run x')
    )
    expect(res.outputs['run-requested']).toBe('false')
    expect(world.api.requests).toEqual([])
  })
})
