// The proxy's standard output, one JSON object a line, checked field by field: the proxy runs
// next to hostile traffic, so what it writes is data to validate, never a shape to trust.
import { DENY_REASONS } from './host-rules.js'
import type { EgressEvent, RecordedBody, TranscriptRecord } from './proxy.js'
import { isPlainObject } from '../plain-object.js'

export type ProxyLine =
  | { type: 'ready'; port: number }
  | { type: 'egress'; event: EgressEvent }
  | { type: 'transcript'; record: TranscriptRecord }

type Obj = Record<string, unknown>

const isStr = (v: unknown): v is string => typeof v === 'string'
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)
const optStr = (v: unknown): boolean => v === undefined || isStr(v)
const optNum = (v: unknown): boolean => v === undefined || isNum(v)
const KINDS = new Set(['connect', 'http', 'credential'])
const REASONS = new Set<string>(DENY_REASONS)

/** One line of the proxy's output, or undefined when it is not a well-formed record. */
export function parseProxyLine(line: string): ProxyLine | undefined {
  let v: unknown
  try {
    v = JSON.parse(line)
  } catch {
    return undefined
  }
  if (!isPlainObject(v)) return undefined
  if (v.type === 'ready') return isNum(v.port) ? { type: 'ready', port: v.port } : undefined
  if (v.type === 'egress') return isEgressEvent(v) ? { type: 'egress', event: v } : undefined
  if (v.type === 'transcript')
    return isTranscript(v) ? { type: 'transcript', record: v } : undefined
  return undefined
}

function isEgressEvent(v: Obj): v is Obj & EgressEvent {
  return (
    isStr(v.time) &&
    isStr(v.kind) &&
    KINDS.has(v.kind) &&
    isStr(v.method) &&
    isStr(v.host) &&
    isNum(v.port) &&
    typeof v.allowed === 'boolean' &&
    (v.reason === undefined || (isStr(v.reason) && REASONS.has(v.reason))) &&
    optStr(v.detail) &&
    optStr(v.address) &&
    optNum(v.status) &&
    optStr(v.route) &&
    optNum(v.reflected) &&
    isNum(v.bytesUp) &&
    isNum(v.bytesDown) &&
    isNum(v.durationMs)
  )
}

function isHeaders(v: unknown): v is Record<string, string> {
  return isPlainObject(v) && Object.values(v).every(isStr)
}

function isBody(v: unknown): v is RecordedBody {
  return (
    isPlainObject(v) &&
    isNum(v.bytes) &&
    isStr(v.sha256) &&
    typeof v.truncated === 'boolean' &&
    isStr(v.text)
  )
}

function isExchange(v: unknown): boolean {
  return isPlainObject(v) && isHeaders(v.headers) && isBody(v.body)
}

function isTranscript(v: Obj): v is Obj & TranscriptRecord {
  return (
    isStr(v.time) &&
    isStr(v.route) &&
    isStr(v.method) &&
    isStr(v.path) &&
    isNum(v.status) &&
    isNum(v.durationMs) &&
    isExchange(v.request) &&
    isExchange(v.response)
  )
}
