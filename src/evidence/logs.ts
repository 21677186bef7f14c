import * as fs from 'node:fs'
import { Writable } from 'node:stream'
import type { StreamRedactor } from '../redact.js'

/**
 * A log file with a size cap: the first `cap` bytes are kept, the rest is counted and dropped,
 * and a visible marker says so at the end. The same kept bytes go to `echo` (the live log), line
 * by line, so a flood of output can exhaust neither the disk nor the runner's memory.
 */
export class CappedLog extends Writable {
  bytesTotal = 0
  bytesKept = 0
  private readonly fd: number
  private partial = ''

  constructor(
    readonly file: string,
    readonly cap: number,
    private readonly echo?: (line: string) => void,
    /** Masks secret values before anything is kept or echoed. */
    private readonly redactor?: StreamRedactor
  ) {
    super()
    this.fd = fs.openSync(file, 'w', 0o644)
  }

  get truncated(): boolean {
    return this.bytesTotal > this.bytesKept
  }

  override _write(raw: Buffer, _enc: BufferEncoding, done: (error?: Error | null) => void): void {
    this.keep(this.redactor ? this.redactor.push(raw) : raw, done)
  }

  private keep(chunk: Buffer, done: (error?: Error | null) => void): void {
    this.bytesTotal += chunk.length
    const room = this.cap - this.bytesKept
    if (room <= 0) return done()
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk
    this.bytesKept += kept.length
    fs.write(this.fd, kept, (error) => {
      if (!error) this.echoText(kept.toString('utf8'))
      done(error)
    })
  }

  private echoText(text: string): void {
    if (!this.echo) return
    const lines = (this.partial + text).split('\n')
    this.partial = lines.pop() ?? ''
    if (this.partial.length > 4096) {
      lines.push(this.partial)
      this.partial = ''
    }
    for (const line of lines) this.echo(line)
  }

  /** On end: flushes the last partial line, writes the truncation marker, closes the file. */
  override _final(done: (error?: Error | null) => void): void {
    const rest = this.redactor?.flush()
    if (rest !== undefined && rest.length > 0) {
      this.keep(rest, (error) => (error ? done(error) : this.close(done)))
      return
    }
    this.close(done)
  }

  private close(done: (error?: Error | null) => void): void {
    try {
      if (this.partial !== '') this.echo?.(this.partial)
      this.partial = ''
      if (this.truncated) {
        const marker = `\n[airlock] log truncated: kept the first ${this.bytesKept} of ${this.bytesTotal} bytes (max-log-bytes)\n`
        fs.writeSync(this.fd, marker)
        this.echo?.(marker.trim())
      }
      fs.closeSync(this.fd)
      done()
    } catch (error) {
      done(error as Error)
    }
  }

  /** Ends the log and waits until it is on disk. */
  async finish(): Promise<void> {
    if (this.writableFinished) return
    await new Promise<void>((resolve, reject) => {
      this.once('finish', resolve)
      this.once('error', reject)
      this.end()
    })
  }
}
