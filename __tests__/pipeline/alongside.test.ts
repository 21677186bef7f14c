import { alongside } from '../../src/pipeline/alongside.js'
import { MemoryLogger } from '../../src/log.js'

const later = <T>(value: T, ticks = 2): Promise<T> =>
  new Promise((resolve) => {
    let n = ticks
    const step = (): void => (--n <= 0 ? resolve(value) : void setImmediate(step))
    setImmediate(step)
  })

describe('steps alongside each other', () => {
  it('returns the results in order; the live step logs as it goes, the others after it, never interleaved', async () => {
    const log = new MemoryLogger()
    const got = await alongside(log, 1, [
      async (l) => {
        l.info('resolve: one')
        await later(0, 3)
        l.info('resolve: two')
        return 'plan'
      },
      (l) =>
        l.group('image', async () => {
          l.info('image: cached')
          await later(0, 5)
          return 42
        }),
      async (l) =>
        l.group('workspace', async () => {
          l.warn('scratch not bounded')
          await later(0, 1)
          l.info('workspace: written')
          return { ws: true }
        })
    ])
    expect(got).toEqual(['plan', 42, { ws: true }])
    expect(log.lines).toEqual([
      '>> image',
      'image: cached',
      'resolve: one',
      'resolve: two',
      '>> workspace',
      'warning: scratch not bounded',
      'workspace: written'
    ])
  })

  it('waits for every step before it throws, and throws the failure of the first step in the list', async () => {
    const log = new MemoryLogger()
    let scratchDone = false
    const run = alongside(log, 0, [
      async () => {
        await later(0, 6)
        throw new Error('image failed (later in time, first in the flow)')
      },
      async () => {
        throw new Error('resolve failed first in time')
      },
      async (l) => {
        await later(0, 10)
        scratchDone = true
        l.info('scratch made')
        return 1
      }
    ])
    await expect(run).rejects.toThrow('image failed')
    // The slow step had finished (the cleanup after the failure finds what it made), and its
    // lines were shown.
    expect(scratchDone).toBe(true)
    expect(log.lines).toContain('scratch made')
    // The other failure is said, not dropped.
    expect(log.lines.join('\n')).toContain('also failed alongside: resolve failed first in time')
  })
})
