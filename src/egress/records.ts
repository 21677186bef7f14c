// What the egress proxy writes, one JSON object a line: an attempt (egress.jsonl) or a recorded
// exchange of a credentials route (transcript.jsonl). Types only, shared by the proxy, the
// transcript reader and the host side.
import type { DenyReason } from './host-rules.js'

export interface EgressEvent {
  type: 'egress'
  time: string
  kind: 'connect' | 'http' | 'credential'
  method: string
  host: string
  port: number
  allowed: boolean
  reason?: DenyReason
  detail?: string
  /** The address the proxy connected to (after the checks). */
  address?: string
  status?: number
  route?: string
  /** Injected credential values masked in what the upstream answered (headers and body). */
  reflected?: number
  bytesUp: number
  bytesDown: number
  durationMs: number
}

export interface RecordedBody {
  bytes: number
  sha256: string
  truncated: boolean
  text: string
}

export interface TranscriptRecord {
  type: 'transcript'
  time: string
  route: string
  method: string
  path: string
  status: number
  durationMs: number
  request: { headers: Record<string, string>; body: RecordedBody }
  response: { headers: Record<string, string>; body: RecordedBody }
}

export type ProxyEvent = EgressEvent | TranscriptRecord
