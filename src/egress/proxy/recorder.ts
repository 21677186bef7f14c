// A body on its way through the proxy: counted and hashed in full, kept up to a cap.
import { createHash } from 'node:crypto'
import type { RecordedBody } from '../records.js'

export class Recorder {
  private readonly chunks: Buffer[] = []
  private kept = 0
  private readonly hash = createHash('sha256')
  bytes = 0
  constructor(private readonly cap: number) {}
  push(chunk: Buffer): void {
    this.bytes += chunk.length
    this.hash.update(chunk)
    if (this.kept < this.cap) {
      const part = chunk.subarray(0, this.cap - this.kept)
      this.chunks.push(part)
      this.kept += part.length
    }
  }
  body(redact: (s: string) => string): RecordedBody {
    return {
      bytes: this.bytes,
      sha256: this.hash.digest('hex'),
      truncated: this.kept < this.bytes,
      text: redact(Buffer.concat(this.chunks).toString('utf8'))
    }
  }
}
