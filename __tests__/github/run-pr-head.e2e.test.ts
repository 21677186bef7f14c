import * as fs from 'node:fs'
import * as path from 'node:path'
import { randomBytes } from 'node:crypto'
import {
  PR_NUMBER,
  TOKEN,
  webhook,
  closeWorld,
  gitIn,
  makeWorld,
  runAction
} from '../../__fixtures__/action-harness.js'
import type { World } from '../../__fixtures__/action-harness.js'
import { startResultsService } from '../support/results-service.js'
import type { ResultsService } from '../support/results-service.js'

/**
 * Run mode on a pull_request event where the workspace holds what GitHub checks out by default:
 * the merge commit of refs/pull/N/merge. Without `ref`, the agent must work on the pull
 * request's head, and the review and the gate must land on that head.
 */
let world: World
let results: ResultsService
let head: string
let merge: string
let base: string

beforeEach(async () => {
  results = await startResultsService()
  world = await makeWorld({
    'README.md': 'hello\n',
    '.airlock/Dockerfile': 'FROM airlock-local/busybox:1\n'
  })
  base = world.base
  const ws = world.workspace
  // The pull request: one commit on feature, pushed; main moves on too (so a merge is real).
  gitIn(ws, ['checkout', '-q', 'feature'])
  fs.writeFileSync(path.join(ws, 'feature.txt'), 'from the pull request\n')
  gitIn(ws, ['add', 'feature.txt'])
  gitIn(ws, ['commit', '-q', '-m', 'feature work'])
  head = gitIn(ws, ['rev-parse', 'HEAD']).trim()
  gitIn(ws, ['checkout', '-q', 'main'])
  fs.writeFileSync(path.join(ws, 'main.txt'), 'main moved on\n')
  gitIn(ws, ['add', 'main.txt'])
  gitIn(ws, ['commit', '-q', '-m', 'main work'])
  base = gitIn(ws, ['rev-parse', 'HEAD']).trim()
  const bare = path.join(world.root, 'remote.git')
  gitIn(ws, ['push', '-q', bare, 'main', 'feature'])
  // What actions/checkout leaves for pull_request: the merge commit, detached.
  gitIn(ws, ['checkout', '-q', '--detach', base])
  gitIn(ws, ['merge', '-q', '--no-ff', '-m', `Merge ${head} into ${base}`, head])
  merge = gitIn(ws, ['rev-parse', 'HEAD']).trim()
})
afterEach(async () => {
  results?.close()
  await closeWorld(world)
})

function event(headSha: string): Record<string, unknown> {
  return webhook('pull_request', 'synchronize', (p) => {
    p.number = PR_NUMBER
    p.pull_request.number = PR_NUMBER
    p.pull_request.head.sha = headSha
    p.pull_request.head.ref = 'feature'
    p.pull_request.head.repo.full_name = 'octo-org/hello'
    p.pull_request.base.sha = base
    p.pull_request.base.ref = 'main'
    p.pull_request.base.repo.full_name = 'octo-org/hello'
  })
}

function runMode(headSha: string) {
  return runAction({
    inputs: {
      mode: 'run',
      dockerfile: '.airlock/Dockerfile',
      'allow-unpinned-base': 'true',
      'agent-command': 'echo "agent was here" > README.md',
      'github-token': TOKEN,
      'run-id': `e2e-${randomBytes(4).toString('hex')}`,
      memory: '256m',
      cpus: '1'
    },
    eventName: 'pull_request',
    payload: event(headSha),
    apiUrl: world.api.url,
    workspace: world.workspace,
    env: { ...results.env, GITHUB_SHA: merge, GITHUB_REF: `refs/pull/${PR_NUMBER}/merge` }
  })
}

test('without ref, the agent works on the head commit and the gate lands on the head', async () => {
  expect(merge).not.toBe(head)
  const run = await runMode(head)
  expect([run.code, run.stderr.slice(-2000)]).toEqual([0, expect.any(String)])
  const report = JSON.parse(fs.readFileSync(path.join(world.out, 'report.json'), 'utf8')) as {
    repo: { headSha: string; ref: string }
  }
  expect(report.repo.headSha).toBe(head)
  // The merge commit's main.txt is not part of the agent's starting tree: the diff is the agent's.
  expect(fs.readFileSync(path.join(world.out, 'diff.patch'), 'utf8')).not.toContain('main.txt')
  expect(world.api.statuses).toEqual([
    expect.objectContaining({ sha: head, state: 'pending', context: 'airlock/approval' })
  ])
  expect(world.api.reviews.map((r) => r.commit_id)).toEqual([head])
})

test('a checkout without the head commit is a configuration error naming ref', async () => {
  const missing = 'f'.repeat(40)
  const run = await runMode(missing)
  expect(run.code).not.toBe(0)
  expect(run.stdout).toMatch(
    /::error title=Agent Airlock%3A configuration::ref: .*does not contain the pull request's head commit f{40}/
  )
  expect(world.api.writes()).toEqual([])
})
