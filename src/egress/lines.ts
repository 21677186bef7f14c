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

export const isStr = (v: unknown): v is string => typeof v === 'string'
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)
const optStr = (v: unknown): boolean => v === undefined || isStr(v)
const optNum = (v: unknown): boolean => v === undefined || isNum(v)
export const isBool = (v: unknown): v is boolean => typeof v === 'boolean'
/** A check that the value is one of the strings of `set`. */
export const oneOf =
  (set: ReadonlySet<string>) =>
  (v: unknown): v is string =>
    isStr(v) && set.has(v)
/** Per field, the check its value must pass (an absent field is checked as undefined). */
export type Shape = Record<string, (v: unknown) => boolean>
/** The same check for each of `fields`. */
export function each(check: (v: unknown) => boolean, ...fields: string[]): Shape {
  return Object.fromEntries(fields.map((field) => [field, check]))
}
/** Whether every field of `shape` passes its check on `v`. */
export function fitsShape(v: Obj, shape: Shape): boolean {
  return Object.entries(shape).every(([field, check]) => check(v[field]))
}
export const KINDS = new Set(['connect', 'http', 'credential'])
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

const EGRESS_EVENT: Shape = {
  ...each(isStr, 'time', 'method', 'host'),
  ...each(isNum, 'port', 'bytesUp', 'bytesDown', 'durationMs'),
  ...each(optStr, 'detail', 'address', 'route'),
  ...each(optNum, 'status', 'reflected'),
  kind: oneOf(KINDS),
  allowed: isBool,
  reason: (r) => r === undefined || oneOf(REASONS)(r)
}

function isEgressEvent(v: Obj): v is Obj & EgressEvent {
  return fitsShape(v, EGRESS_EVENT)
}

function isHeaders(v: unknown): v is Record<string, string> {
  return isPlainObject(v) && Object.values(v).every(isStr)
}

function isBody(v: unknown): v is RecordedBody {
  return (
    isPlainObject(v) &&
    fitsShape(v, { bytes: isNum, sha256: isStr, truncated: isBool, text: isStr })
  )
}

function isExchange(v: unknown): boolean {
  return isPlainObject(v) && isHeaders(v.headers) && isBody(v.body)
}

const TRANSCRIPT: Shape = {
  ...each(isStr, 'time', 'route', 'method', 'path'),
  ...each(isNum, 'status', 'durationMs'),
  ...each(isExchange, 'request', 'response')
}

function isTranscript(v: Obj): v is Obj & TranscriptRecord {
  return fitsShape(v, TRANSCRIPT)
}
