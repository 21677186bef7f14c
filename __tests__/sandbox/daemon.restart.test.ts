import { execFileSync, spawn, spawnSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { validateReport } from '../../src/report/schema.js'
import { ROOT } from '../support/cli.js'
import { leftovers, makeWorkspace, tempDirsOf, uniqueRunId, until } from '../support/run.js'

/**
 * A real daemon restart in the middle of the agent phase. It stops every container on the
 * machine's engine, so it runs alone and last (`npm run test:daemon-restart`, the last step of
 * `npm test`), never next to other tests. The daemon's stop kills the agent with SIGTERM (exit
 * 143): that is the engine's fault, never `agent-failed`.
 */

function dockerdPid(): number {
  return Number(execFileSync('pidof', ['dockerd']).toString().trim().split(/\s+/)[0])
}

describe('a daemon restart while the agent runs', () => {
  it('is an infrastructure error, exit 3, the report written, nothing left once the daemon is back', async () => {
    const ws = makeWorkspace({ 'a.txt': 'a\n' })
    const runId = uniqueRunId('restart')
    const report = path.join(ws, 'airlock-out', 'report.json')
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
        'echo agent-started; sleep 120',
        '--run-id',
        runId
      ],
      {
        cwd: ws,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, AIRLOCK_ENGINE_TIMEOUT_MS: '5000' }
      }
    )
    let stdout = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', () => undefined)
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
    try {
      expect(await until(() => stdout.includes('agent-started'), 60_000, 200)).toBe(true)
      const pid = dockerdPid()
      process.kill(pid, 'SIGTERM')
      expect(
        await until(() => spawnSync('kill', ['-0', String(pid)]).status !== 0, 60_000, 200)
      ).toBe(true)
      expect(spawnSync('bash', [path.join(ROOT, 'scripts/ensure-docker.sh')]).status).toBe(0)
      expect(await exited).toBe(3)
      const written = JSON.parse(fs.readFileSync(report, 'utf8')) as { outcome: string }
      expect(written.outcome).toBe('infrastructure-error')
      expect(validateReport(written).errors).toEqual([])
      const clean = spawnSync(process.execPath, [
        path.join(ROOT, 'dist/cli.js'),
        'cleanup',
        '--run-id',
        runId
      ])
      expect(clean.status).toBe(0)
      expect(await leftovers(runId)).toBe(0)
      expect(tempDirsOf(runId)).toEqual([])
    } finally {
      child.kill('SIGKILL')
      fs.rmSync(ws, { recursive: true, force: true })
    }
  }, 300_000)
})
