import * as fs from 'node:fs'
import * as path from 'node:path'
import { createHash } from 'node:crypto'
import { ConfigurationError, RefusedError } from '../errors.js'
import type { Outcome, Report } from './report.js'
import { validateReport } from './schema.js'
import { requireMatchingStatement } from './provenance-verify.js'

/**
 * What the GitHub modes read from a run's output folder. The folder usually comes from an
 * artifact a job that ran untrusted code produced, so it is data to check, not to trust: every
 * field used is validated for type and shape, sizes are capped, symlinks are not followed.
 */
export interface RunEvidence {
  /** report.json, as far as the GitHub modes use it. */
  report: ReportFacts
  /** SHA-256 of report.json's bytes (the `Airlock-Report-Sha256` trailer). */
  reportSha256: string
  /**
   * The whole report.json, validated against schema/report.schema.json: what the review is
   * rendered from. comment.md in the folder is never read (it is the run's own copy, and whoever
   * could change the artifact could change it).
   */
  full: Report
  /** diff.patch, when present (its SHA-256 is the report's diff.sha256). */
  patch: Buffer | null
}

export interface ReportFacts {
  schemaVersion: 1
  runId: string
  outcome: Outcome
  outcomeReason: string
  headSha: string
  baseSha: string | null
  diffSha256: string | null
  imageId: string | null
  imageRef: string | null
  violations: { rule: string; path: string | null; detail: string }[]
}

export const OUTCOMES: readonly Outcome[] = [
  'success',
  'agent-failed',
  'tests-failed',
  'timed-out',
  'policy-violation',
  'infrastructure-error',
  'configuration-error',
  'cancelled'
]

const MAX_REPORT_BYTES = 16 * 1024 * 1024
const MAX_PATCH_BYTES = 64 * 1024 * 1024
const SHA1 = /^[0-9a-f]{40}$/
const SHA256 = /^[0-9a-f]{64}$/
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

export class InvalidEvidenceError extends RefusedError {
  constructor(message: string) {
    super(`invalid run evidence: ${message}`)
    this.name = 'InvalidEvidenceError'
  }
}

function readCapped(file: string, max: number): Buffer | null {
  let st: fs.Stats
  try {
    st = fs.lstatSync(file)
  } catch {
    return null
  }
  if (!st.isFile()) throw new InvalidEvidenceError(`${path.basename(file)} is not a regular file`)
  if (st.size > max) throw new InvalidEvidenceError(`${path.basename(file)} is over ${max} bytes`)
  return fs.readFileSync(file)
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function field<T>(
  obj: Record<string, unknown>,
  name: string,
  check: (v: unknown) => v is T,
  what: string
): T {
  const v = obj[name]
  if (!check(v)) throw new InvalidEvidenceError(`${name} must be ${what}`)
  return v
}

const isString = (v: unknown): v is string => typeof v === 'string'
const isStringOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string'
const isObj = (v: unknown): v is Record<string, unknown> => isObject(v)

/** Validates the parts of report.json the GitHub modes rely on. */
export function parseReport(raw: unknown): ReportFacts {
  if (!isObject(raw)) throw new InvalidEvidenceError('report.json is not a JSON object')
  if (raw.schemaVersion !== 1) {
    throw new InvalidEvidenceError(
      `schemaVersion ${JSON.stringify(raw.schemaVersion)} is not supported (expected 1)`
    )
  }
  const runId = field(raw, 'runId', isString, 'a string')
  if (!RUN_ID.test(runId)) throw new InvalidEvidenceError('runId has unexpected characters')
  const outcome = field(
    raw,
    'outcome',
    (v): v is Outcome => typeof v === 'string' && (OUTCOMES as string[]).includes(v),
    `one of ${OUTCOMES.join(', ')}`
  )
  const outcomeReason = field(raw, 'outcomeReason', isString, 'a string')
  for (const name of ['startedAt', 'finishedAt']) field(raw, name, isString, 'a string')
  const repo = field(raw, 'repo', isObj, 'an object')
  const headSha = field(repo, 'headSha', isStringOrNull, 'a string or null')
  if (headSha === null || !SHA1.test(headSha)) {
    throw new InvalidEvidenceError('repo.headSha must be a 40-hex commit SHA')
  }
  const baseSha = field(repo, 'baseSha', isStringOrNull, 'a string or null')
  if (baseSha !== null && !SHA1.test(baseSha))
    throw new InvalidEvidenceError('repo.baseSha must be a commit SHA or null')
  const image = field(raw, 'image', isObj, 'an object')
  const imageId = field(image, 'id', isStringOrNull, 'a string or null')
  const imageRef = field(image, 'ref', isStringOrNull, 'a string or null')
  const diff = field(raw, 'diff', isObj, 'an object')
  const diffSha256 = field(diff, 'sha256', isStringOrNull, 'a string or null')
  if (diffSha256 !== null && !SHA256.test(diffSha256))
    throw new InvalidEvidenceError('diff.sha256 must be 64 hex digits or null')
  field(diff, 'files', Array.isArray, 'an array')
  const policy = field(raw, 'policy', isObj, 'an object')
  const rawViolations = field(policy, 'violations', Array.isArray, 'an array') as unknown[]
  const violations = rawViolations.map((v) => {
    if (!isObject(v) || typeof v.rule !== 'string' || typeof v.detail !== 'string')
      throw new InvalidEvidenceError('policy.violations[] must have rule and detail strings')
    return {
      rule: v.rule,
      path: typeof v.path === 'string' ? v.path : null,
      detail: v.detail
    }
  })
  return {
    schemaVersion: 1,
    runId,
    outcome,
    outcomeReason,
    headSha,
    baseSha,
    diffSha256,
    imageId,
    imageRef,
    violations
  }
}

export function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex')
}

/**
 * A further check of a run folder (for example against its provenance record), run after the
 * report and the patch passed theirs; it throws InvalidEvidenceError to refuse the evidence.
 */
export type EvidenceCheck = (outputDir: string, evidence: RunEvidence) => void

/**
 * Reads and checks a run's output folder: report.json (size-capped, valid JSON, valid against the
 * schema) and diff.patch (size-capped, its SHA-256 equal to the report's diff.sha256; present
 * exactly when the report names a diff). Nothing else in the folder is read.
 */
export function readEvidence(
  outputDir: string,
  checks: readonly EvidenceCheck[] = []
): RunEvidence {
  const reportBytes = readCapped(path.join(outputDir, 'report.json'), MAX_REPORT_BYTES)
  if (reportBytes === null) {
    throw new ConfigurationError(
      'output-dir',
      `${outputDir} has no report.json; point output-dir at the downloaded run artifact`
    )
  }
  let raw: unknown
  try {
    raw = JSON.parse(reportBytes.toString('utf8'))
  } catch {
    throw new InvalidEvidenceError('report.json is not valid JSON')
  }
  const report = parseReport(raw)
  const check = validateReport(raw)
  if (!check.valid) {
    throw new InvalidEvidenceError(
      `report.json does not match schema/report.schema.json: ${check.errors.slice(0, 5).join('; ')}`
    )
  }
  const patch = readCapped(path.join(outputDir, 'diff.patch'), MAX_PATCH_BYTES)
  if (report.diffSha256 !== null) {
    if (patch === null)
      throw new InvalidEvidenceError('report.json names a diff but diff.patch is missing')
    if (sha256Hex(patch) !== report.diffSha256)
      throw new InvalidEvidenceError('diff.patch does not match diff.sha256 in report.json')
  } else if (patch !== null && patch.length > 0) {
    throw new InvalidEvidenceError('diff.patch is not empty but report.json names no diff')
  }
  const evidence: RunEvidence = {
    report,
    reportSha256: sha256Hex(reportBytes),
    full: raw as Report,
    patch
  }
  for (const c of checks) c(outputDir, evidence)
  return evidence
}

/**
 * Whether `dir` is there: false when nothing is at the path, true for a folder; anything else at
 * the path is a mistake of the input that named it (`named.input`, with `named.fix`).
 */
export function isEvidenceFolder(dir: string, named: { input: string; fix: string }): boolean {
  let st: fs.Stats
  try {
    st = fs.lstatSync(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
  if (!st.isDirectory())
    throw new ConfigurationError(named.input, `${dir} is not a folder; ${named.fix}`)
  return true
}

/**
 * A downloaded run folder, read as hostile data: null when there is no folder at `dir`; else
 * every file must match its provenance.json (EvidenceMismatchError), then report.json and
 * diff.patch are read and checked as `readEvidence` checks them. `refuse` turns a failed check
 * into the caller's error (default: the check's own).
 */
export function readVerifiedEvidence(
  dir: string,
  named: { input: string; fix: string },
  refuse: (error: unknown) => unknown = (error) => error
): RunEvidence | null {
  if (!isEvidenceFolder(dir, named)) return null
  try {
    requireMatchingStatement(dir)
    return readEvidence(dir)
  } catch (error) {
    throw refuse(error)
  }
}
