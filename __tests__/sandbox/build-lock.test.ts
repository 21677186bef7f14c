import { spawn, spawnSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { CancelledError } from '../../src/errors.js'
import { withBuildLock } from '../../src/sandbox/build-lock.js'
import type { LockHolder } from '../../src/sandbox/build-lock.js'

const KEY = 'ab'.repeat(32)
let dir: string
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-lock-'))
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

const tick = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

describe('withBuildLock', () => {
  it('lets one holder at a time in, the others wait and are told who holds it', async () => {
    let active = 0
    let most = 0
    const waits: (LockHolder | null)[] = []
    const work = (name: string): Promise<string> =>
      withBuildLock(
        KEY,
        name,
        async () => {
          active++
          most = Math.max(most, active)
          await tick(30)
          active--
          return name
        },
        { dir, pollMs: 5, onWait: (h) => waits.push(h) }
      )
    const names = ['run-a', 'run-b', 'run-c', 'run-d', 'run-e']
    expect(await Promise.all(names.map(work))).toEqual(names)
    expect(most).toBe(1)
    expect(waits.length).toBeGreaterThanOrEqual(1)
    expect(
      waits.every((h) => h !== null && names.includes(h.holder) && h.pid === process.pid)
    ).toBe(true)
    expect(fs.readdirSync(dir)).toEqual([])
  })

  it('removes a lock whose holder process is gone and takes it', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.exit(0)']).pid as number
    const file = path.join(dir, `build-${KEY}.lock`)
    fs.writeFileSync(
      file,
      JSON.stringify({ holder: 'crashed-run', pid: dead, host: os.hostname(), since: 'x' })
    )
    const stale: (LockHolder | null)[] = []
    const r = await withBuildLock(KEY, 'me', async () => fs.readFileSync(file, 'utf8'), {
      dir,
      pollMs: 5,
      onStale: (h) => stale.push(h)
    })
    expect(JSON.parse(r)).toMatchObject({ holder: 'me', pid: process.pid })
    expect(stale.map((h) => h?.holder)).toEqual(['crashed-run'])
    expect(fs.existsSync(file)).toBe(false)
  })

  it('waits for a live holder, and a cancelled wait throws CancelledError', async () => {
    const sleeper = spawn('sleep', ['30'])
    try {
      const file = path.join(dir, `build-${KEY}.lock`)
      const held = JSON.stringify({
        holder: 'other-run',
        pid: sleeper.pid,
        host: os.hostname(),
        since: 'x'
      })
      fs.writeFileSync(file, held)
      const controller = new AbortController()
      let ran = false
      const waiting = withBuildLock(
        KEY,
        'me',
        async () => {
          ran = true
        },
        { dir, pollMs: 5, signal: controller.signal }
      )
      await tick(100)
      controller.abort('SIGINT')
      await expect(waiting).rejects.toBeInstanceOf(CancelledError)
      expect(ran).toBe(false)
      // The other run's lock is left alone.
      expect(fs.readFileSync(file, 'utf8')).toBe(held)
    } finally {
      sleeper.kill('SIGKILL')
    }
  })

  it('releases the lock when the work throws', async () => {
    await expect(
      withBuildLock(
        KEY,
        'me',
        async () => {
          throw new Error('build failed')
        },
        { dir }
      )
    ).rejects.toThrow('build failed')
    expect(fs.readdirSync(dir)).toEqual([])
  })
})
