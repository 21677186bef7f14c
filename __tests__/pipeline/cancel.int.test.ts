import { spawn } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { validateReport } from '../../src/report/schema.js'
import { ROOT } from '../support/cli.js'
import {
  leftovers,
  makeWorkspace,
  runNode,
  tempDirsOf,
  uniqueRunId,
  until
} from '../support/run.js'

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/**
 * The runner's cancel sequence exactly: SIGINT, 7.5 s, SIGTERM, 2.5 s, SIGKILL of the process
 * tree — against an agent that ignores SIGTERM, with the default 10 s grace (longer than the
 * runner waits). The `cancelled` report must be on disk before the SIGTERM comes.
 */
describe('cancellation as the runner does it', () => {
  it('writes the cancelled report before the containers are stopped; cleanup leaves nothing', async () => {
    const ws = makeWorkspace({ 'a.txt': 'a\n' })
    const runId = uniqueRunId('cancel')
    const out = path.join(ws, 'airlock-out')
    const report = path.join(out, 'report.json')
    const child = spawn(
      process.execPath,
      [
        path.join(ROOT, 'dist/cli.js'),
        'run',
        '--path',
        'repo',
        '--dockerfile',
        'agent/Dockerfile',
        '--agent-command',
        "trap '' TERM; echo agent-started; echo partial > a.txt; sleep 120",
        '--grace-seconds',
        '10',
        '--memory',
        '64m',
        '--cpus',
        '1',
        '--run-id',
        runId
      ],
      { cwd: ws, detached: true, stdio: ['ignore', 'pipe', 'pipe'] }
    )
    let stdout = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', () => undefined)
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
    try {
      expect(await until(() => stdout.includes('agent-started'), 60_000)).toBe(true)
      child.kill('SIGINT')
      await sleep(7500)
      // Before the runner's SIGTERM: the report says cancelled, with the agent's log so far.
      expect(fs.existsSync(report)).toBe(true)
      const early = JSON.parse(fs.readFileSync(report, 'utf8')) as { outcome: string }
      expect(early.outcome).toBe('cancelled')
      expect(validateReport(early).errors).toEqual([])
      expect(fs.readFileSync(path.join(out, 'logs', 'agent.log'), 'utf8')).toContain(
        'agent-started'
      )
      child.kill('SIGTERM')
      await sleep(2500)
      try {
        process.kill(-(child.pid as number), 'SIGKILL')
      } catch {
        // already gone
      }
      await exited
      const last = JSON.parse(fs.readFileSync(report, 'utf8')) as { outcome: string }
      expect(last.outcome).toBe('cancelled')
      expect(validateReport(last).errors).toEqual([])
    } finally {
      try {
        process.kill(-(child.pid as number), 'SIGKILL')
      } catch {
        // gone
      }
      const clean = await runNode([path.join(ROOT, 'dist/cli.js'), 'cleanup', '--run-id', runId], {
        cwd: ws,
        env: process.env
      })
      expect(clean.status).toBe(0)
      expect(await leftovers(runId)).toBe(0)
      expect(tempDirsOf(runId)).toEqual([])
      fs.rmSync(ws, { recursive: true, force: true })
    }
  }, 120_000)
})
