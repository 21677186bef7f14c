import * as fs from 'node:fs'
import * as path from 'node:path'
import { randomBytes } from 'node:crypto'
import {
  TOKEN,
  sha256,
  closeWorld,
  makeWorld,
  pullRequestEvent,
  runAction
} from '../../__fixtures__/action-harness.js'
import type { ActionRun, World } from '../../__fixtures__/action-harness.js'
import { ACTIONS_BOT } from '../../__fixtures__/github-stand-in.js'
import { startResultsService } from '../support/results-service.js'
import type { ResultsService } from '../support/results-service.js'

/**
 * `mode: run` end to end: the real pipeline in a real container (the local busybox test image),
 * then publishing to the stand-in from the same step.
 */
let world: World
let results: ResultsService
beforeEach(async () => {
  // The run uploads its evidence: to a local stand-in of the artifact service (one per test:
  // every test is its own workflow run, and an artifact name is unique within a run).
  results = await startResultsService()
})
afterEach(() => results?.close())
beforeEach(async () => {
  world = await makeWorld({
    'README.md': 'hello\n',
    '.airlock/Dockerfile': 'FROM airlock-local/busybox:1\n'
  })
})
afterEach(async () => {
  await closeWorld(world)
})

function runMode(extra: Record<string, string>): Promise<ActionRun> {
  return runAction({
    inputs: {
      mode: 'run',
      dockerfile: '.airlock/Dockerfile',
      'allow-unpinned-base': 'true',
      'agent-command': 'echo "hello, world" > README.md',
      'github-token': TOKEN,
      'run-id': `e2e-${randomBytes(4).toString('hex')}`,
      memory: '256m',
      cpus: '1',
      ...extra
    },
    eventName: 'pull_request',
    payload: pullRequestEvent(world.base),
    apiUrl: world.api.url,
    workspace: world.workspace,
    env: { ...results.env, RUNNER_OS: 'Linux', RUNNER_ARCH: 'X64' }
  })
}

describe('run mode with publishing', () => {
  test('runs the agent, then posts the review and the pending gate for its diff', async () => {
    const run = await runMode({})
    expect(run.code).toBe(0)
    expect(run.outputs.outcome).toBe('success')
    const patch = fs.readFileSync(path.join(world.out, 'diff.patch'))
    expect(run.outputs['diff-sha256']).toBe(sha256(patch))
    const reviews = world.api.reviews.filter((r) => r.user.login === ACTIONS_BOT.login)
    expect(reviews).toHaveLength(1)
    expect(reviews[0].body).toContain(`"diffSha256":"${sha256(patch)}"`)
    expect(reviews[0].body).toContain('hello, world')
    // The runner's facts, read once by the entry, reach report.json.
    const report = JSON.parse(fs.readFileSync(path.join(world.out, 'report.json'), 'utf8')) as {
      runner: { github: unknown }
    }
    expect(report.runner.github).toEqual({ runnerOs: 'Linux', runnerArch: 'X64', imageOs: null })
    expect(world.api.statuses).toEqual([
      expect.objectContaining({
        sha: world.base,
        state: 'pending',
        description: `awaiting approval of diff ${sha256(patch).slice(0, 12)}`
      })
    ])
  })

  test('dry-run: the run happens, the payloads are written, nothing reaches GitHub', async () => {
    const run = await runMode({ 'dry-run': 'true' })
    expect(run.code).toBe(0)
    expect(world.api.writes()).toEqual([])
    const record = JSON.parse(fs.readFileSync(path.join(world.out, 'dry-run.json'), 'utf8')) as {
      writes: { route: string }[]
    }
    expect(record.writes.map((w) => w.route)).toContain('POST /repos/{owner}/{repo}/statuses/{sha}')
  })

  test('publish: false keeps the run job read-only', async () => {
    const run = await runMode({ publish: 'false' })
    expect(run.code).toBe(0)
    expect(world.api.requests).toEqual([])
  })
})
