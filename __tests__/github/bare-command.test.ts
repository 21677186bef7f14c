// A bare `/airlock run` (no instructions) from a writer starts a run with the repository's review
// task — the one task for pull requests and commands — instead of being refused; the reply says so.
import { PEOPLE, PR_NUMBER, TOKEN, makeWorld } from '../../__fixtures__/action-harness.js'
import type { World } from '../../__fixtures__/action-harness.js'
import { createClient } from '../../src/github/client/client.js'
import { parseEvent } from '../../src/event.js'
import type { RunEvent } from '../../src/event.js'
import { acceptedReply, decideCommand, runCommand } from '../../src/github/conversation/command.js'
import { MemoryLogger } from '../../src/log.js'

let world: World
beforeEach(async () => {
  world = await makeWorld()
})
afterEach(async () => {
  await world.close()
})

function comment(body: string, login = PEOPLE.writer.login): RunEvent {
  return parseEvent(
    { GITHUB_EVENT_NAME: 'issue_comment', GITHUB_REPOSITORY: 'octo-org/hello' },
    JSON.stringify({
      action: 'created',
      issue: { number: PR_NUMBER, pull_request: { url: 'u' } },
      comment: { id: 9, body, user: { login, type: 'User' } }
    })
  )
}

test("a writer's bare `/airlock run` is accepted with an empty task (the workflow runs the review task)", async () => {
  const ctx = comment('/airlock run')
  const cmd = runCommand(ctx)
  if (cmd === null) throw new Error('not a command')
  const octokit = createClient({ token: TOKEN, log: new MemoryLogger(), baseUrl: world.api.url })
  const decision = await decideCommand(octokit, { owner: 'octo-org', repo: 'hello' }, cmd)
  expect(decision).toMatchObject({ accepted: true, task: '' })
  if (!decision.accepted) throw new Error('refused')
  expect(acceptedReply(cmd, decision, undefined)).toMatch(/with the review task/)
  expect(world.api.violations).toEqual([])
})

test("a reader's bare `/airlock run` is still refused", async () => {
  const ctx = comment('/airlock run', PEOPLE.reader.login)
  const cmd = runCommand(ctx)
  if (cmd === null) throw new Error('not a command')
  const octokit = createClient({ token: TOKEN, log: new MemoryLogger(), baseUrl: world.api.url })
  expect(await decideCommand(octokit, { owner: 'octo-org', repo: 'hello' }, cmd)).toMatchObject({
    accepted: false
  })
})
