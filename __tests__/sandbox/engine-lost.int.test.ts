import { jest } from '@jest/globals'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { main } from '../../src/cli.js'
import type { Report } from '../../src/report/report.js'
import { validateReport } from '../../src/report/schema.js'
import { DockerRuntime } from '../../src/sandbox/docker/index.js'
import { startFaultProxy } from '../support/fault-proxy.js'
import type { FaultProxy } from '../support/fault-proxy.js'
import {
  BUSYBOX,
  imageId,
  leftovers,
  makeWorkspace,
  tempDirsOf,
  uniqueRunId
} from '../support/run.js'
import { testHost } from '../support/host.js'

/**
 * The engine goes away in the middle of a phase: the socket proxy in front of the daemon cuts
 * every open connection (the attach, wait and statistics streams) and its socket disappears, as
 * when the daemon crashes. The phase's own deadline is far away (timeout-minutes 5, health
 * timeout 240 s) and the test's own timeout is 60 s: the run can only end in time by noticing
 * the loss itself. Each time: `infrastructure-error` with its reason, the report written, and,
 * the engine being back within the retry window, nothing of the run left.
 */

const FAR = { 'timeout-minutes': '5', 'grace-seconds': '2' }

interface Cut {
  /** The container whose start is followed, one second later, by the loss of the engine. */
  container: RegExp
  /** When the engine comes back after the loss (undefined: not before the run ends). */
  backAfterMs?: number
}

interface Lost {
  code: number
  report: Report
  /** From the loss to the end of the run. */
  afterLossMs: number
}

/** Runs with the engine behind a proxy that goes away one second after `cut.container` starts. */
async function runLosing(ws: string, values: Record<string, string>, cut: Cut): Promise<Lost> {
  const proxy: FaultProxy = await startFaultProxy()
  const runId = values['run-id'] ?? uniqueRunId('lost')
  const out = path.join(ws, `out-${runId}`)
  let created = false
  let lostAt: number | undefined
  const timers: NodeJS.Timeout[] = []
  proxy.onRequest = (method, url) => {
    if (method === 'POST' && /\/containers\/create\?/.test(url)) {
      const name = new URL(url, 'http://engine').searchParams.get('name') ?? ''
      if (cut.container.test(name)) created = true
    }
    if (created && lostAt === undefined && method === 'POST' && /\/start$/.test(url)) {
      created = false
      lostAt = -1
      timers.push(
        setTimeout(() => {
          lostAt = Date.now()
          void proxy.kill()
          if (cut.backAfterMs !== undefined)
            timers.push(setTimeout(() => void proxy.revive(), cut.backAfterMs))
        }, 1000)
      )
    }
  }
  const env = { ...process.env }
  process.env.DOCKER_HOST = `unix://${proxy.socketPath}`
  process.env.GITHUB_WORKSPACE = ws
  const all: Record<string, string> = {
    path: 'repo',
    dockerfile: 'agent/Dockerfile',
    memory: '128m',
    cpus: '1',
    ...FAR,
    ...values,
    'run-id': runId,
    'output-dir': out
  }
  try {
    const code = await main(['run', ...Object.entries(all).flatMap(([k, v]) => [`--${k}`, v])])
    const end = Date.now()
    if (lostAt === undefined || lostAt < 0) throw new Error('the engine was never cut')
    const report = JSON.parse(fs.readFileSync(path.join(out, 'report.json'), 'utf8')) as Report
    expect(validateReport(report).errors).toEqual([])
    return { code, report, afterLossMs: end - lostAt }
  } finally {
    process.env = env
    for (const t of timers) clearTimeout(t)
    await proxy.close()
  }
}

const measured: string[] = []

describe('the engine lost in the middle of a phase', () => {
  let ws: string
  let quiet: ReturnType<typeof jest.spyOn>[] = []
  beforeAll(() => {
    ws = makeWorkspace({ 'a.txt': 'a\n' }, `FROM ${imageId(BUSYBOX)}\n`)
    quiet = [
      jest.spyOn(process.stderr, 'write').mockImplementation(() => true),
      jest.spyOn(process.stdout, 'write').mockImplementation(() => true)
    ]
  })
  afterAll(() => {
    for (const q of quiet) q.mockRestore()
    fs.rmSync(ws, { recursive: true, force: true })
    // The figures behind docs/BENCHMARKS.md ("engine lost"): seconds from the loss to the end.
    if (measured.length > 0)
      process.stdout.write(`engine lost, run ended after: ${measured.join(', ')}\n`)
  })

  const expectLost = async (lost: Lost, phase: string, pattern: RegExp): Promise<void> => {
    const { report } = lost
    measured.push(`${phase} ${(lost.afterLossMs / 1000).toFixed(1)} s`)
    expect({ code: lost.code, outcome: report.outcome, reason: report.outcomeReason }).toEqual({
      code: 3,
      outcome: 'infrastructure-error',
      reason: expect.stringMatching(pattern)
    })
    // The engine came back within the retry window: the run's cleanup removed everything.
    expect(await leftovers(report.runId)).toBe(0)
    expect(tempDirsOf(report.runId)).toEqual([])
  }

  test('during the agent', async () => {
    const lost = await runLosing(
      ws,
      { 'agent-command': 'echo agent-started; sleep 300', 'test-command': 'true' },
      { container: /-agent$/, backAfterMs: 3000 }
    )
    await expectLost(lost, 'agent', /engine.*(lost|away|answer)/i)
    expect(lost.report.agent.error).toMatch(/engine went away/)
  }, 60_000)

  test('during the tests', async () => {
    const lost = await runLosing(
      ws,
      { 'agent-command': 'true', 'test-command': 'echo tests-started; sleep 300' },
      { container: /-tests$/, backAfterMs: 3000 }
    )
    await expectLost(lost, 'tests', /tests container failed: .*engine/i)
  }, 60_000)

  test('during the install phase', async () => {
    const lost = await runLosing(
      ws,
      {
        'setup-command': 'echo install-started; sleep 300',
        'agent-command': 'true',
        'test-command': 'true'
      },
      { container: /-setup$/, backAfterMs: 3000 }
    )
    await expectLost(lost, 'install', /setup command failed .*engine/i)
  }, 60_000)

  test("during a service's health check", async () => {
    const lost = await runLosing(
      ws,
      {
        services: [
          'cache:',
          `  image: ${imageId(BUSYBOX)}`,
          '  user: "65534"',
          '  command: sleep 300',
          '  health: sleep 300',
          '  health-timeout-seconds: 240',
          ''
        ].join('\n'),
        'agent-command': 'true',
        'test-command': 'true'
      },
      { container: /-health-1$/, backAfterMs: 3000 }
    )
    await expectLost(lost, 'service health check', /service cache.*engine/i)
  }, 60_000)

  test('an engine that stays away: the run still ends, with its evidence; the cleanup removes the rest later', async () => {
    const runId = uniqueRunId('lost')
    const lost = await runLosing(
      ws,
      { 'agent-command': 'sleep 300', 'test-command': 'true', 'run-id': runId },
      { container: /-agent$/ }
    )
    measured.push(`agent, engine away for good ${(lost.afterLossMs / 1000).toFixed(1)} s`)
    expect([lost.code, lost.report.outcome]).toEqual([3, 'infrastructure-error'])
    // The engine never came back through the proxy: its container is still on the real daemon,
    // labelled with the run, for `airlock cleanup --run-id` (or the Action's post step).
    expect(await leftovers(runId)).toBeGreaterThan(0)
    await new DockerRuntime(testHost).cleanup(runId)
    expect(await leftovers(runId)).toBe(0)
  }, 60_000)
})
