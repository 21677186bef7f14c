import { Writable } from 'node:stream'

/**
 * The engine's multiplexed output stream (frames of an 8-byte header — stream type, three zero
 * bytes, big-endian payload length — then the payload) split into stdout and stderr, with
 * back-pressure: a chunk is taken from the engine only once the writers have taken the previous
 * one, so the container's output moves at the pace of its log files and is never gathered in
 * memory (dockerode's own demuxer writes without waiting and concatenates what arrives).
 */
export class Demultiplexer extends Writable {
  private readonly header = Buffer.alloc(8)
  private headerBytes = 0
  /** Payload bytes of the current frame still to come. */
  private left = 0
  private target: Writable
  /** Not a multiplexed stream (a TTY): everything goes to stdout as it comes. */
  private raw = false

  constructor(
    private readonly stdout: Writable,
    private readonly stderr: Writable
  ) {
    super()
    this.target = stdout
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (error?: Error | null) => void): void {
    const full = new Set<Writable>()
    const put = (target: Writable, data: Buffer): void => {
      if (data.length > 0 && !target.write(data) && !target.destroyed) full.add(target)
    }
    if (this.raw) put(this.stdout, chunk)
    let offset = 0
    while (!this.raw && offset < chunk.length) {
      if (this.left === 0) {
        const n = Math.min(8 - this.headerBytes, chunk.length - offset)
        chunk.copy(this.header, this.headerBytes, offset, offset + n)
        this.headerBytes += n
        offset += n
        if (this.headerBytes < 8) break
        this.headerBytes = 0
        const type = this.header.readUInt8(0)
        if (type > 2 || this.header.readUIntBE(1, 3) !== 0) {
          // Not a frame header: the stream is not multiplexed; pass it through as it is.
          this.raw = true
          put(this.stdout, Buffer.from(this.header))
          put(this.stdout, chunk.subarray(offset))
          break
        }
        this.left = this.header.readUInt32BE(4)
        this.target = type === 2 ? this.stderr : this.stdout
        continue
      }
      const n = Math.min(this.left, chunk.length - offset)
      put(this.target, chunk.subarray(offset, offset + n))
      this.left -= n
      offset += n
    }
    if (full.size === 0) return done()
    let waiting = full.size
    for (const target of full) {
      const resume = (): void => {
        target.off('drain', resume)
        target.off('close', resume)
        target.off('error', resume)
        if (--waiting === 0) done()
      }
      target.on('drain', resume)
      // A writer that went away takes nothing more: do not wait for it forever.
      target.on('close', resume)
      target.on('error', resume)
    }
  }
}
