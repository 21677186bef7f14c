// Checking an output folder against its provenance.json, offline: the statement's form, the
// report's agreement with it, and the SHA-256 of every evidence file (changed, missing or added).
import { RefusedError } from '../errors.js'
import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import {
  MAX_FILES,
  MAX_STATEMENT_BYTES,
  PREDICATE_TYPE,
  PROVENANCE_FILE,
  SHA256,
  STATEMENT_TYPE,
  UNBOUND_FILES,
  boundOf,
  fileSha256,
  listFolder
} from './provenance.js'
import type { BoundFile, Listing, ProvenancePredicate, Statement } from './provenance.js'
import { hasControl } from '../text-filter.js'
import type { Report } from './report.js'

export interface VerifyResult {
  ok: boolean
  /** One line per mismatch: what differs, naming the file. */
  problems: string[]
  statement?: Statement
  /** Files checked and found equal to the statement. */
  matched: number
}

/** Reads and checks the shape of provenance.json; throws with the reason when it is unusable. */
export function readStatement(outDir: string): Statement {
  const file = path.join(outDir, PROVENANCE_FILE)
  const st = fs.lstatSync(file)
  if (!st.isFile()) throw new Error(`${PROVENANCE_FILE} is not a regular file`)
  if (st.size > MAX_STATEMENT_BYTES) throw new Error(`${PROVENANCE_FILE} is too large`)
  const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Statement> | null
  if (raw === null || typeof raw !== 'object')
    throw new Error(`${PROVENANCE_FILE} is not an object`)
  if (raw._type !== STATEMENT_TYPE) throw new Error(`_type is not ${STATEMENT_TYPE}`)
  if (raw.predicateType !== PREDICATE_TYPE)
    throw new Error(`predicateType is not ${PREDICATE_TYPE}`)
  const subject = raw.subject
  if (
    !Array.isArray(subject) ||
    subject.length !== 1 ||
    subject[0]?.name !== 'diff.patch' ||
    typeof subject[0]?.digest?.sha256 !== 'string' ||
    !SHA256.test(subject[0].digest.sha256)
  ) {
    throw new Error('the subject is not the diff (diff.patch with a sha256 digest)')
  }
  const files = raw.predicate?.files
  if (!Array.isArray(files) || files.length > MAX_FILES)
    throw new Error('predicate.files is missing')
  const seen = new Set<string>()
  for (const f of files as unknown[]) {
    const b = f as Partial<BoundFile> | null
    if (
      b === null ||
      typeof b !== 'object' ||
      typeof b.path !== 'string' ||
      typeof b.sha256 !== 'string' ||
      !SHA256.test(b.sha256) ||
      typeof b.bytes !== 'number' ||
      !safeRelative(b.path) ||
      seen.has(b.path)
    ) {
      throw new Error(`predicate.files has an invalid entry: ${JSON.stringify(f).slice(0, 200)}`)
    }
    seen.add(b.path)
  }
  return raw as Statement
}

/** The predicate's facts are the report's (a statement edited alone is found). */
function reportAgrees(outDir: string, p: ProvenancePredicate): string[] {
  let r: Report
  try {
    r = JSON.parse(fs.readFileSync(path.join(outDir, 'report.json'), 'utf8')) as Report
  } catch {
    return ['report.json: not readable JSON']
  }
  const pairs: [string, unknown, unknown][] = [
    ['runId', p.runId, r.runId],
    ['outcome', p.outcome, r.outcome],
    ['repo.headSha', p.repo?.headSha, r.repo?.headSha],
    ['repo.baseSha', p.repo?.baseSha, r.repo?.baseSha],
    ['image.id', p.image?.id, r.image?.id],
    ['image.dockerfileSha256', p.image?.dockerfileSha256, r.image?.dockerfileSha256],
    ['task.sha256', p.task?.sha256, r.task?.sha256]
  ]
  const t = r.threatReview
  pairs.push(
    ['threatReview.verdict', p.threatReview?.verdict ?? null, t?.verdict ?? null],
    ['threatReview.diffSha256', p.threatReview?.diffSha256 ?? null, t?.diffSha256 ?? null]
  )
  const problems = pairs
    .filter(([, a, b]) => a !== b)
    .map(([k]) => `predicate.${k}: differs from report.json`)
  // The verdict holds for the diff it judged: the one this statement binds, and the report's.
  if (t !== undefined && t !== null && t.diffSha256 !== r.diff?.sha256)
    problems.push('report.json: threatReview judged another diff than diff.sha256')
  return problems
}

/** The threat review's verdict is bound to the diff the statement's subject names. */
function threatBound(statement: Statement): string[] {
  const t = statement.predicate.threatReview
  if (t === undefined || t === null) return []
  return t.diffSha256 === statement.subject[0].digest.sha256
    ? []
    : ['predicate.threatReview: its verdict is for another diff than the subject (diff.patch)']
}

function safeRelative(p: string): boolean {
  return (
    p !== '' &&
    p.length <= 4096 &&
    !p.startsWith('/') &&
    !p.includes('\\') &&
    !hasControl(p) &&
    !/[\t\n\r]/.test(p) &&
    p.split('/').every((s) => s !== '' && s !== '.' && s !== '..')
  )
}

/**
 * Checks, offline, that every file of the folder is the one the statement binds: the same
 * bytes, none missing, none added, no symlink or special file; that the subject is the diff
 * bound among the files; and that the predicate's copies of report facts match report.json.
 */
export function verifyProvenance(outDir: string): VerifyResult {
  let statement: Statement
  try {
    statement = readStatement(outDir)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return { ok: false, problems: [`${PROVENANCE_FILE}: ${reason}`], matched: 0 }
  }
  const problems: string[] = []
  let listing: Listing
  try {
    listing = listFolder(outDir)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return {
      ok: false,
      problems: [`the folder cannot be listed: ${reason}`],
      statement,
      matched: 0
    }
  }
  for (const o of listing.odd) problems.push(`${o}: not a regular file (symlink or special file)`)
  const present = new Set(listing.files.filter((f) => !UNBOUND_FILES.has(f)))
  let matched = 0
  for (const f of statement.predicate.files) {
    if (!present.has(f.path)) {
      problems.push(`${f.path}: missing`)
      continue
    }
    present.delete(f.path)
    const actual = fileSha256(path.join(outDir, f.path))
    if (actual.sha256 !== f.sha256) {
      problems.push(`${f.path}: changed (sha256 ${actual.sha256}, the statement binds ${f.sha256})`)
    } else matched++
  }
  for (const extra of present) problems.push(`${extra}: not in the statement`)
  const diffBound =
    boundOf(statement.predicate.files, 'diff.patch') ??
    createHash('sha256').update('').digest('hex')
  if (statement.subject[0].digest.sha256 !== diffBound) {
    problems.push('subject: its digest is not the diff.patch the statement binds')
  }
  problems.push(...threatBound(statement))
  if (problems.length === 0) problems.push(...reportAgrees(outDir, statement.predicate))
  return { ok: problems.length === 0, problems, statement, matched }
}

/** Evidence that does not match its statement: refused by the modes that act on it. */
export class EvidenceMismatchError extends RefusedError {
  constructor(readonly problems: string[]) {
    super(
      `the evidence does not match its ${PROVENANCE_FILE}: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? ` (and ${problems.length - 5} more)` : ''}`
    )
    this.name = 'EvidenceMismatchError'
  }
}

/** Throws EvidenceMismatchError unless every file of the folder matches its statement. */
export function requireMatchingStatement(outDir: string): Statement {
  const r = verifyProvenance(outDir)
  if (!r.ok || r.statement === undefined) throw new EvidenceMismatchError(r.problems)
  return r.statement
}
