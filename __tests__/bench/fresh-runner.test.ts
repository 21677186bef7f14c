// The fresh-runner benchmark's pure parts: the slow link's pacing, its forwarding (bytes intact
// and in order, an answer followed by an immediate close still delivered), and the table's
// breakdown and verdicts. No assertion on wall-clock time.
import * as net from 'node:net'
import { linkOf, pace, parseForward, startSlowLink } from '../../bench/slow-link.mjs'
import {
  formatFresh,
  median,
  phases,
  summarizeFresh,
  summarizeOverlap
} from '../../bench/fresh-runner-table.mjs'
import type { FreshResult } from '../../bench/fresh-runner-table.mjs'

describe('pace', () => {
  const link = { bytesPerMs: 1000, oneWayMs: 10 }

  it('an idle link: serialisation, then the one-way delay', () => {
    const r = pace({ freeAt: 0 }, 100, 5000, link)
    expect(r.state.freeAt).toBe(105)
    expect(r.at).toBe(115)
  })

  it('a busy link: a chunk waits behind the earlier ones', () => {
    const a = pace({ freeAt: 0 }, 0, 10_000, link)
    const b = pace(a.state, 1, 1000, link)
    expect(b.state.freeAt).toBe(11)
    expect(b.at).toBe(21)
    expect(b.at).toBeGreaterThan(a.at)
  })

  it('departures never go backwards, whatever the chunk sizes', () => {
    let state = { freeAt: 0 }
    let last = -Infinity
    for (const [now, bytes] of [
      [0, 65536],
      [0, 1],
      [3, 0],
      [50, 70000],
      [51, 10]
    ]) {
      const r = pace(state, now, bytes, link)
      expect(r.at).toBeGreaterThanOrEqual(last)
      last = r.at
      state = r.state
    }
  })

  it('a link given in Mbit/s and a round trip', () => {
    expect(linkOf(400, 20)).toEqual({ bytesPerMs: 50_000, oneWayMs: 10 })
  })

  it.each([
    [{ bytesPerMs: 0, oneWayMs: 1 }],
    [{ bytesPerMs: -1, oneWayMs: 1 }],
    [{ bytesPerMs: 1, oneWayMs: -1 }],
    [{ bytesPerMs: Number.NaN, oneWayMs: 1 }]
  ])('refuses a link that cannot carry anything: %j', (bad) => {
    expect(() => pace({ freeAt: 0 }, 0, 1, bad)).toThrow(RangeError)
  })
})

describe('parseForward', () => {
  it('reads listen=target', () => {
    expect(parseForward('0.0.0.0:5001=127.0.0.1:5000')).toEqual({
      host: '0.0.0.0',
      port: 5001,
      targetHost: '127.0.0.1',
      targetPort: 5000
    })
  })
  it.each(['5001=127.0.0.1:5000', '0.0.0.0:5001', 'a:b=c:d', ''])('refuses %j', (bad) => {
    expect(() => parseForward(bad)).toThrow(/--forward/)
  })
})

describe('startSlowLink', () => {
  async function listen(onConn: (s: net.Socket) => void): Promise<net.Server> {
    const server = net.createServer({ allowHalfOpen: true }, onConn)
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    return server
  }
  const portOf = (s: net.Server): number => (s.address() as net.AddressInfo).port
  async function freePort(): Promise<number> {
    const s = await listen(() => undefined)
    const p = portOf(s)
    await new Promise((r) => s.close(r))
    return p
  }
  function exchange(port: number, send: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const c = net.connect(port, '127.0.0.1')
      const got: Buffer[] = []
      c.on('data', (d) => got.push(d))
      c.on('end', () => resolve(Buffer.concat(got)))
      c.on('error', reject)
      c.end(send)
    })
  }

  it('forwards every byte in order both ways, and an answer sent just before a close', async () => {
    // An echo server that answers once the request is complete, then closes at once.
    const upstream = await listen((s) => {
      const got: Buffer[] = []
      s.on('data', (d) => got.push(d))
      s.on('end', () => s.end(Buffer.concat(got).reverse()))
    })
    const port = await freePort()
    const link = await startSlowLink({
      forwards: [parseForward(`127.0.0.1:${port}=127.0.0.1:${portOf(upstream)}`)],
      mbit: 2000,
      rttMs: 2
    })
    try {
      const payload = Buffer.alloc(3 * 1024 * 1024)
      for (let i = 0; i < payload.length; i++) payload[i] = (i * 7 + (i >> 12)) & 0xff
      const back = await exchange(port, payload)
      expect(back.length).toBe(payload.length)
      expect(back.equals(Buffer.from(payload).reverse())).toBe(true)
    } finally {
      await link.close()
      await new Promise((r) => upstream.close(r))
    }
  })
})

describe('the table', () => {
  // A cold run's log as the action prints it (ms from the start), as the inner script keeps it.
  const lines: [number, string][] = [
    [390, '::group::image'],
    [8885, 'Status: Downloaded newer image for localhost:5001/library/node@sha256:ab'],
    [9423, '[1/2] FROM localhost:5001/library/node@sha256:ab'],
    [22225, '[2/2] RUN npm install --global ...'],
    [23991, '::endgroup::'],
    [24056, '::group::workspace'],
    [24096, '::endgroup::'],
    [24097, '::group::egress'],
    [24805, 'egress proxy up: 0 allowed host rule(s), 1 credential route(s)']
  ]

  it('splits a cold run into consecutive phases that add up to the whole', () => {
    const p = phases({ lines, first: 26582 })
    expect(p).toEqual({
      'start: Node, the bundle, inputs': 390,
      'pull base': 8495,
      'build: context, base metadata': 538,
      'build: RUN npm install -g (the CLI)': 12802,
      'build: export, tag (restored: image found)': 1766,
      'workspace (+ scratch filesystem)': 106,
      'pull proxy image': null,
      'proxy start': 708,
      'agent container → first request': 1777
    })
    const sum = Object.values(p).reduce<number>((a, b) => a + (b ?? 0), 0)
    expect(sum).toBe(26582)
  })

  it('a restored run: the restore first, no pull or build lines in the action', () => {
    const p = phases({
      restore: { pullBase: 8000, downloadAndLoad: 6000 },
      lines: [
        [14400, '::group::image'],
        [14500, '::endgroup::'],
        [14600, '::group::egress'],
        [15300, 'egress proxy up']
      ],
      first: 17000
    })
    expect(p['restore: pull base']).toBe(8000)
    expect(p['start: Node, the bundle, inputs']).toBe(400)
    expect(p['pull base']).toBeNull()
    expect(p['build: RUN npm install -g (the CLI)']).toBeNull()
    expect(p['build: export, tag (restored: image found)']).toBe(100)
    expect(p['agent container → first request']).toBe(1700)
  })

  it('a proxy pull after the build is counted as such, never as the base', () => {
    const p = phases({
      lines: [
        [300, '::group::image'],
        [400, '::endgroup::'],
        [500, '::group::egress'],
        [3500, 'Status: Downloaded newer image for x'],
        [4000, 'egress proxy up']
      ],
      first: 5000
    })
    expect(p['pull base']).toBeNull()
    expect(p['pull proxy image']).toBe(3000)
  })

  it('medians, ratio and verdict per case; failed runs left out and counted', () => {
    const results: FreshResult[] = [
      { round: 0, side: 'cold', ok: true, ms: 30000, lines, first: 30000 },
      {
        round: 0,
        side: 'baseline',
        pair: 'cold',
        ok: true,
        ms: 10000,
        breakdown: { install: 9000, start: 1000 }
      },
      { round: 1, side: 'cold', ok: true, ms: 20000, lines, first: 20000 },
      {
        round: 1,
        side: 'baseline',
        pair: 'cold',
        ok: true,
        ms: 12000,
        breakdown: { install: 11000, start: 1000 }
      },
      { round: 0, side: 'restored', ok: false },
      { round: 0, side: 'baseline', pair: 'restored', ok: true, ms: 11000 }
    ]
    const [cold, restored] = summarizeFresh(results)
    expect(cold).toMatchObject({ case: 'cold', runs: 2, ours: 25000, baseline: 11000, target: 1.5 })
    expect(cold.ratio).toBeCloseTo(25000 / 11000)
    expect(restored).toMatchObject({
      case: 'restored',
      runs: 0,
      failed: 1,
      ours: null,
      ratio: null
    })
    const text = formatFresh([cold, restored], { markdown: true, link: 'L', load: '1 2 3' })
    expect(text).toMatch(/\| P11 \|.*\| 2\.27× \| ≤ 1\.5× \| miss \|/)
    expect(text).toMatch(/\| P11r \|.*\| no result \|/)
    expect(text).toContain('1 run(s) failed and are left out')
    expect(text).toContain('load average: 1 2 3')
  })

  it('the lever check: medians of the pull, the install and both, apart from the table', () => {
    const results: FreshResult[] = [
      { round: 0, side: 'overlap', ok: true, ms: 12000, breakdown: { pull: 9000, install: 12000 } },
      {
        round: 1,
        side: 'overlap',
        ok: true,
        ms: 14000,
        breakdown: { pull: 14000, install: 11000 }
      },
      { round: 0, side: 'cold', ok: true, ms: 20000, lines, first: 20000 },
      { round: 0, side: 'baseline', pair: 'cold', ok: true, ms: 10000 }
    ]
    expect(summarizeFresh(results).map((s) => s.case)).toEqual(['cold'])
    const v = summarizeOverlap(results)
    expect(v).toEqual({ runs: 2, pull: 11500, install: 11500, both: 13000 })
    const text = formatFresh(summarizeFresh(results), {
      markdown: false,
      link: 'L',
      load: 'x',
      overlap: v
    })
    expect(text).toContain('both after 13000 ms')
    expect(summarizeOverlap(results.slice(2))).toBeNull()
  })

  it('median ignores missing values', () => {
    expect(median([3, null, 1, undefined, 2])).toBe(2)
    expect(median([])).toBeNull()
  })
})
