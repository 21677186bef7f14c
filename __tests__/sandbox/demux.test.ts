import { PassThrough, Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { Demultiplexer } from '../../src/sandbox/docker/demux.js'

function frame(type: number, text: string): Buffer {
  const payload = Buffer.from(text)
  const header = Buffer.alloc(8)
  header.writeUInt8(type, 0)
  header.writeUInt32BE(payload.length, 4)
  return Buffer.concat([header, payload])
}

/** A writer that takes one chunk at a time, only when told to. */
class SlowSink extends Writable {
  chunks: string[] = []
  private pending: (() => void) | undefined
  constructor() {
    super({ highWaterMark: 4 })
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.chunks.push(chunk.toString())
    this.pending = done
  }
  release(): void {
    const p = this.pending
    this.pending = undefined
    p?.()
  }
}

function collect(): { sink: Writable; text: () => string } {
  const parts: Buffer[] = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      parts.push(chunk)
      done()
    }
  })
  return { sink, text: () => Buffer.concat(parts).toString() }
}

describe('the engine output demultiplexer', () => {
  it('splits frames into stdout and stderr, whatever the chunk boundaries', async () => {
    const whole = Buffer.concat([frame(1, 'out one\n'), frame(2, 'err\n'), frame(1, 'out two\n')])
    for (const size of [1, 3, 8, 9, whole.length]) {
      const out = collect()
      const err = collect()
      const source = new PassThrough()
      const done = pipeline(source, new Demultiplexer(out.sink, err.sink))
      for (let i = 0; i < whole.length; i += size) source.write(whole.subarray(i, i + size))
      source.end()
      await done
      expect([size, out.text(), err.text()]).toEqual([size, 'out one\nout two\n', 'err\n'])
    }
  })

  it('passes a stream that is not multiplexed through as stdout', async () => {
    const out = collect()
    const err = collect()
    const source = new PassThrough()
    const done = pipeline(source, new Demultiplexer(out.sink, err.sink))
    source.end('plain text output\n')
    await done
    expect([out.text(), err.text()]).toEqual(['plain text output\n', ''])
  })

  it('takes no more from the source than the writer has taken (back-pressure)', async () => {
    const sink = new SlowSink()
    const demux = new Demultiplexer(sink, sink)
    let pulled = 0
    const source = new Readable({
      highWaterMark: 16,
      read() {
        this.push(pulled < 1000 ? frame(1, `${'x'.repeat(990)} ${pulled}\n`) : null)
        pulled++
      }
    })
    source.pipe(demux)
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r))
    // The writer holds one chunk; the stream buffers between source and writer fill (tens of
    // kilobytes, by Node's high-water marks); the rest of the megabyte waits in the source (never
    // read), not in memory.
    expect(sink.chunks.length).toBe(1)
    expect(pulled).toBeLessThan(200)
    for (let i = 0; i < 2000 && sink.chunks.length < 1000; i++) {
      sink.release()
      await new Promise((r) => setImmediate(r))
    }
    expect(sink.chunks.length).toBe(1000)
    expect(sink.chunks[999]).toBe(`${'x'.repeat(990)} 999\n`)
  })
})
