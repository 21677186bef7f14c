import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { mountsUnder } from '../../src/workspace/bounded.js'
import { docker, leftovers, makeWorkspace, runAirlock, uniqueRunId } from '../support/run.js'
import type { TestRun } from '../support/run.js'

type Kind = 'success' | 'timeout' | 'oom' | 'cancel'

/** Each run's own inputs: the agent writes and prints its marker, then does what its kind does. */
const AGENT: Record<Kind, { command: string; values?: Record<string, string> }> = {
  success: { command: 'true' },
  timeout: {
    command: "trap '' TERM; sleep 1000",
    values: { 'timeout-minutes': '0.05', 'grace-seconds': '1' }
  },
  oom: { command: 'awk \'BEGIN { s = "x"; while (1) s = s s }\'', values: { memory: '48m' } },
  cancel: { command: 'sleep 120' }
}
const EXPECTED: Record<Kind, string> = {
  success: 'success',
  timeout: 'timed-out',
  oom: 'agent-failed',
  cancel: 'cancelled'
}

/** Every file under `dir` (the run's output folder), as text. */
function allText(dir: string): string {
  let text = ''
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) text += fs.readFileSync(path.join(e.parentPath, e.name), 'utf8')
  }
  return text
}

/** Aborts when the run's agent container is running (a cancel in the middle of the phase). */
async function abortWhenRunning(runId: string, controller: AbortController): Promise<void> {
  const filters = JSON.stringify({
    label: [`dev.airlock.run-id=${runId}`, 'dev.airlock.phase=agent']
  })
  for (let i = 0; i < 600 && !controller.signal.aborted; i++) {
    if ((await docker.listContainers({ filters })).length > 0) {
      // Let the agent print its marker first.
      await new Promise((r) => setTimeout(r, 500))
      controller.abort('SIGTERM')
      return
    }
    await new Promise((r) => setTimeout(r, 200))
  }
}

describe('load: 8 concurrent runs on one machine', () => {
  let ws: string
  let tempRoot: string
  afterAll(() => {
    fs.rmSync(ws, { recursive: true, force: true })
    fs.rmSync(tempRoot, { recursive: true, force: true })
  })

  it('two each of success, timeout, OOM and cancel: right outcomes, no cross-talk, nothing left', async () => {
    ws = makeWorkspace({ 'README.md': 'hello\n' })
    tempRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-load-'))
    const kinds: Kind[] = ['success', 'timeout', 'oom', 'cancel']
    const runs = kinds.flatMap((kind) =>
      [1, 2].map((n) => {
        const runId = uniqueRunId(`load-${kind}${n}`)
        return { kind, runId, marker: `marker-${runId}` }
      })
    )
    const started = Date.now()
    const results: TestRun[] = await Promise.all(
      runs.map(async ({ kind, runId, marker }) => {
        const controller = new AbortController()
        const watcher = kind === 'cancel' ? abortWhenRunning(runId, controller) : undefined
        const agent = AGENT[kind]
        const run = await runAirlock(
          ws,
          {
            'run-id': runId,
            'output-dir': `out-${runId}`,
            task: `task of ${marker}`,
            'workspace-size': '64m',
            'agent-command': `echo ${marker} > mine.txt; echo ${marker}; ${agent.command}`,
            ...agent.values
          },
          { tempRoot, ...(kind === 'cancel' ? { signal: controller.signal } : {}) }
        )
        controller.abort('done')
        await watcher
        return run
      })
    )
    process.stderr.write(`8 concurrent runs: ${Date.now() - started} ms\n`)

    for (const [i, { kind, runId, marker }] of runs.entries()) {
      const run = results[i]
      expect({ runId, outcome: run.report.outcome }).toEqual({ runId, outcome: EXPECTED[kind] })
      expect(run.report.runId).toBe(runId)
      if (kind === 'timeout') expect(run.report.agent.timedOut).toBe(true)
      if (kind === 'oom') expect(run.report.agent.oomKilled).toBe(true)
      // Its evidence holds its own marker and no other run's.
      const text = allText(run.outputDir)
      expect(text).toContain(marker)
      for (const other of runs) if (other.runId !== runId) expect(text).not.toContain(other.runId)
      if (kind !== 'cancel') {
        expect(run.report.diff.files.map((f) => f.path)).toEqual(['mine.txt'])
        expect(fs.readFileSync(path.join(run.outputDir, 'diff.patch'), 'utf8')).toContain(
          `+${marker}`
        )
      }
      // Nothing left: containers, networks, volumes by the run's label; its temporary folders.
      expect(await leftovers(runId)).toBe(0)
    }
    expect(fs.readdirSync(tempRoot)).toEqual([])
    expect(await mountsUnder(tempRoot)).toEqual([])
  })
})
