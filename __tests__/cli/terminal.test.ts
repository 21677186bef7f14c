// The CLI's log: a heartbeat with the elapsed time while a phase runs (a live line on a terminal,
// a plain line every 30 s otherwise), one line per phase with --quiet. The clock is a fake.
import { PLAIN_HEARTBEAT_MS, TerminalLogger, elapsed } from '../../src/cli/terminal.js'

function fake(tty: boolean, quiet: boolean) {
  let now = 0
  let beat: (() => void) | undefined
  let period = 0
  const err: string[] = []
  const out: string[] = []
  const log = new TerminalLogger({
    quiet,
    tty,
    write: (t) => err.push(t),
    writeOut: (t) => out.push(t),
    now: () => now,
    every: (fn, ms) => {
      beat = fn
      period = ms
      return { stop: () => (beat = undefined) }
    }
  })
  /** Moves the clock by `ms`, firing the heartbeat as often as it would have fired. */
  const advance = (ms: number): void => {
    const end = now + ms
    while (beat !== undefined && now + period <= end) {
      now += period
      beat()
    }
    now = end
  }
  return { log, err, out, advance, running: () => beat !== undefined }
}

describe('TerminalLogger', () => {
  it('writes a plain heartbeat line every 30 s in a log, and how long the phase took', async () => {
    const t = fake(false, false)
    await t.log.group('agent', async () => {
      t.advance(95_000)
    })
    expect(PLAIN_HEARTBEAT_MS).toBe(30_000)
    expect(t.err.join('')).toBe(
      '==> agent\n' +
        '    … agent: 30s, still running\n' +
        '    … agent: 1m00s, still running\n' +
        '    … agent: 1m30s, still running\n' +
        '    agent done in 1m35s\n'
    )
    expect(t.running()).toBe(false)
  })

  it('keeps one live line on a terminal, erased before anything else is written', async () => {
    const t = fake(true, false)
    await t.log.group('image', async () => {
      t.advance(2000)
      t.log.info('step 1/3')
      t.advance(1000)
    })
    const text = t.err.join('')
    expect(text).toContain('\r\x1b[2K    … image: 2s')
    expect(text).toContain('\r\x1b[2K    step 1/3\n')
    expect(text.endsWith('\r\x1b[2K    image done in 3s\n')).toBe(true)
    // The phase line, the info line, the closing line: the heartbeats added none.
    expect(text.split('\n').filter((l) => l !== '')).toHaveLength(3)
  })

  it('with --quiet in a log: one line per phase, warnings kept, no output echoed', async () => {
    const t = fake(false, true)
    await t.log.group('tests', async () => {
      t.log.info('building')
      t.log.output('tests', 'PASS x.test.js')
      t.log.warn('slow')
      t.advance(120_000)
    })
    expect(t.err.join('')).toBe('==> tests\n    warning: slow\n')
    expect(t.out).toEqual([])
  })

  it('stops the heartbeat when the phase throws', async () => {
    const t = fake(false, false)
    await expect(
      t.log.group('setup', async () => {
        throw new Error('boom')
      })
    ).rejects.toThrow('boom')
    expect(t.running()).toBe(false)
  })

  it('formats elapsed times', () => {
    expect([0, 59_999, 60_000, 3_599_000, 3_600_000, 7_260_000].map(elapsed)).toEqual([
      '0s',
      '59s',
      '1m00s',
      '59m59s',
      '1h00m',
      '2h01m'
    ])
  })
})
