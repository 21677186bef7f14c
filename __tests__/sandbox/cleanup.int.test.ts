import { spawnSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { LABELS } from '../../src/labels.js'
import { makeRunTemp } from '../../src/workspace/temp.js'
import { BUSYBOX, docker, leftovers, uniqueRunId } from '../support/run.js'
import { ROOT } from '../support/cli.js'

describe('airlock cleanup --run-id', () => {
  it('removes the run’s containers and its temporary folders, and nothing else', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-cleanroot-'))
    const runId = uniqueRunId('cleanup')
    try {
      const dir = await makeRunTemp(tmp, runId)
      fs.mkdirSync(path.join(dir, 'workspace'))
      fs.writeFileSync(path.join(dir, 'workspace', 'big'), 'x'.repeat(1024))
      const other = await makeRunTemp(tmp, `${runId}-other`)
      await docker.createContainer({
        Image: BUSYBOX,
        Cmd: ['true'],
        Labels: { [LABELS.managed]: 'true', [LABELS.runId]: runId }
      })
      const r = spawnSync(
        process.execPath,
        [path.join(ROOT, 'dist/cli.js'), 'cleanup', '--run-id', runId],
        {
          env: { ...process.env, TMPDIR: tmp, RUNNER_TEMP: '' }
        }
      )
      expect(r.stderr.toString()).toBe('')
      expect(r.status).toBe(0)
      expect(r.stdout.toString()).toMatch(
        new RegExp(
          `^removed what run ${runId} left: 1 container\\(s\\), .*1 temporary folder\\(s\\)\\n$`
        )
      )
      expect(fs.existsSync(dir)).toBe(false)
      expect(fs.existsSync(other)).toBe(true)
      expect(await leftovers(runId)).toBe(0)
      const again = spawnSync(
        process.execPath,
        [path.join(ROOT, 'dist/cli.js'), 'cleanup', '--run-id', runId, '--json'],
        { env: { ...process.env, TMPDIR: tmp, RUNNER_TEMP: '' } }
      )
      expect(JSON.parse(again.stdout.toString())).toEqual({
        containers: 0,
        networks: 0,
        volumes: 0,
        tempDirs: 0
      })
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true })
    }
  })
})
