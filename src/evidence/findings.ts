// The agent's findings about lines (/airlock/out/review.json, schema/review.schema.json): read as
// hostile input (no symlink, size-capped), each finding checked against the schema on its own, so
// a bad one is refused with a note and the others are kept; never one dropped without a word.
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { ValidateFunction } from 'ajv/dist/2020.js'
import schema from '../../schema/review.schema.json' with { type: 'json' }
import { readInside } from './safe-read.js'
import { isPlainObject } from '../plain-object.js'

export const REVIEW_FILE = 'review.json'
/** At most this many findings are kept; the rest are refused with a note. */
export const MAX_FINDINGS = 50
const MAX_REVIEW_BYTES = 512 * 1024
/** At most this many refusals are listed (the count is always kept). */
const MAX_REFUSALS = 20

export type Side = 'LEFT' | 'RIGHT'
export type Severity = 'error' | 'warning' | 'note'

export interface Finding {
  path: string
  line: number
  side: Side
  startLine?: number
  startSide?: Side
  severity: Severity
  body: string
  suggestion?: string
}

export interface FindingsRecord {
  /** ok: read (some findings may be refused); malformed: not JSON / not the schema; refused: not a regular file or too large. */
  status: 'ok' | 'malformed' | 'refused'
  detail?: string
  findings: Finding[]
  /** Findings not kept, by their index in the file, and why. */
  refused: { index: number; reason: string }[]
  /** Findings in the file (kept and refused). */
  total: number
}

let validators: { file: ValidateFunction; finding: ValidateFunction } | undefined

function compile(): { file: ValidateFunction; finding: ValidateFunction } {
  if (validators) return validators
  const ajv = new Ajv2020({ allErrors: false, strict: true })
  const file = ajv.compile(schema)
  const finding = ajv.getSchema(`${schema.$id}#/$defs/finding`)
  if (finding === undefined) throw new Error('review.schema.json has no finding definition')
  validators = { file, finding }
  return validators
}

/** The findings of review.json's text (see FindingsRecord). */
export function parseFindings(text: string): FindingsRecord {
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch {
    return { status: 'malformed', detail: 'not valid JSON', findings: [], refused: [], total: 0 }
  }
  if (!isPlainObject(doc) || !Array.isArray(doc.findings))
    return {
      status: 'malformed',
      detail: 'not an object with a "findings" array (schema/review.schema.json)',
      findings: [],
      refused: [],
      total: 0
    }
  const { finding: valid } = compile()
  const items = doc.findings as unknown[]
  const findings: Finding[] = []
  const refused: { index: number; reason: string }[] = []
  let refusedTotal = 0
  const refuse = (index: number, reason: string): void => {
    refusedTotal++
    if (refused.length < MAX_REFUSALS) refused.push({ index, reason })
  }
  items.forEach((raw, index) => {
    if (!valid(raw)) {
      const e = valid.errors?.[0]
      refuse(index, `${e?.instancePath || '/'} ${e?.message ?? 'is invalid'}`.trim())
      return
    }
    const f = raw as {
      path: string
      line: number
      side?: Side
      start_line?: number
      start_side?: Side
      severity?: Severity
      body: string
      suggestion?: string
    }
    if (f.start_line !== undefined && f.start_line > f.line) {
      refuse(index, 'start_line is after line')
      return
    }
    if (f.suggestion !== undefined && (f.side ?? 'RIGHT') !== 'RIGHT') {
      refuse(index, 'a suggestion replaces lines of the head: side must be RIGHT')
      return
    }
    if (findings.length >= MAX_FINDINGS) {
      refuse(index, `over the limit of ${MAX_FINDINGS} findings`)
      return
    }
    findings.push({
      path: f.path,
      line: f.line,
      side: f.side ?? 'RIGHT',
      ...(f.start_line !== undefined && f.start_line !== f.line
        ? { startLine: f.start_line, startSide: f.start_side ?? f.side ?? 'RIGHT' }
        : {}),
      severity: f.severity ?? 'note',
      body: f.body,
      ...(f.suggestion !== undefined ? { suggestion: f.suggestion } : {})
    })
  })
  const extra = refusedTotal > refused.length ? refusedTotal - refused.length : 0
  return {
    status: 'ok',
    ...(extra > 0 ? { detail: `${extra} more refusal(s) not listed` } : {}),
    findings,
    refused,
    total: items.length
  }
}

/** review.json from the agent's output folder; null when the agent wrote none. */
export async function readFindings(agentOut: string): Promise<FindingsRecord | null> {
  const read = await readInside(agentOut, REVIEW_FILE, MAX_REVIEW_BYTES)
  if (!read.ok) {
    if (read.reason === 'missing') return null
    return { status: 'refused', detail: read.detail, findings: [], refused: [], total: 0 }
  }
  if (read.truncated)
    return {
      status: 'refused',
      detail: `larger than ${MAX_REVIEW_BYTES / 1024} KiB`,
      findings: [],
      refused: [],
      total: 0
    }
  return parseFindings(read.data.toString('utf8'))
}
