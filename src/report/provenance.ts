import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import type { Report } from './report.js'

/**
 * provenance.json: an in-toto Statement v1 whose subject is the diff and whose predicate binds
 * what produced it (image, Dockerfile, lockfiles, task, transcript, models, commits, tests,
 * policy file, sandbox settings, egress ledger) and the SHA-256 of every evidence file of the
 * output folder. `verifyProvenance` checks a folder against it offline; a changed, missing or
 * added file is found. Signing (Sigstore, on GitHub) happens elsewhere, over these same bytes.
 */

export const PROVENANCE_FILE = 'provenance.json'
/** The Sigstore bundle of a signed statement (written by the publish job, when it signs). */
export const PROVENANCE_BUNDLE_FILE = 'provenance.sigstore.json'
export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1'
export const PREDICATE_TYPE =
  'https://github.com/agent-airlock/agent-airlock/schema/provenance-predicate-v1'

/**
 * Files of the output folder that are not evidence of the run and are not bound: where the
 * folder was uploaded (written after the statement), and the signature over the statement.
 */
const UNBOUND_FILES = new Set([PROVENANCE_FILE, PROVENANCE_BUNDLE_FILE, 'artifact.json'])

const MAX_STATEMENT_BYTES = 4 * 1024 * 1024
const MAX_FILES = 10_000
const SHA256 = /^[0-9a-f]{64}$/

export interface BoundFile {
  path: string
  sha256: string
  bytes: number
}

export interface ProvenancePredicate {
  runId: string
  outcome: string
  startedAt: string
  finishedAt: string
  repo: { baseSha: string | null; headSha: string | null; ref: string }
  image: {
    ref: string | null
    id: string | null
    baseDigests: string[]
    dockerfileSha256: string | null
  }
  dependencies: { path: string; sha256: string | null }[]
  task: { sha256: string }
  transcript: { sha256: string | null }
  models: string[]
  tests: { reportSha256: string | null }
  policyFile: { path: string; commit: string | null; blobSha: string | null }
  sandbox: Record<string, unknown>
  egress: { ledgerSha256: string | null }
  /** Every evidence file of the output folder (all but provenance.json, its signature, artifact.json). */
  files: BoundFile[]
}

export interface Statement {
  _type: typeof STATEMENT_TYPE
  subject: { name: string; digest: { sha256: string } }[]
  predicateType: typeof PREDICATE_TYPE
  predicate: ProvenancePredicate
}

function fileSha256(file: string): { sha256: string; bytes: number } {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
  try {
    const h = createHash('sha256')
    const buf = Buffer.alloc(1024 * 1024)
    let bytes = 0
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null)
      if (n === 0) break
      h.update(buf.subarray(0, n))
      bytes += n
    }
    return { sha256: h.digest('hex'), bytes }
  } finally {
    fs.closeSync(fd)
  }
}

interface Listing {
  files: string[]
  /** Entries that are neither regular files nor folders (symlinks, FIFOs, devices...). */
  odd: string[]
}

/** Every entry of the folder, relative with `/`, without following symlinks. */
function listFolder(dir: string): Listing {
  const out: Listing = { files: [], odd: [] }
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel === '' ? e.name : `${rel}/${e.name}`
      if (e.isDirectory()) walk(r)
      else if (e.isFile()) out.files.push(r)
      else out.odd.push(r)
      if (out.files.length + out.odd.length > MAX_FILES) {
        throw new Error(`more than ${MAX_FILES} files`)
      }
    }
  }
  walk('')
  out.files.sort()
  out.odd.sort()
  return out
}

function boundOf(files: BoundFile[], name: string): string | null {
  return files.find((f) => f.path === name)?.sha256 ?? null
}

/**
 * The statement for an output folder whose report has been written. Its facts are read from
 * report.json as written (secret values already masked), so the two always agree.
 */
export function buildStatement(outDir: string): Statement {
  const report = JSON.parse(fs.readFileSync(path.join(outDir, 'report.json'), 'utf8')) as Report
  const listing = listFolder(outDir)
  if (listing.odd.length > 0) {
    throw new Error(`the output folder holds entries that are not files: ${listing.odd.join(', ')}`)
  }
  const files = listing.files
    .filter((f) => !UNBOUND_FILES.has(f))
    .map((f) => ({ path: f, ...fileSha256(path.join(outDir, f)) }))
  const diffSha = boundOf(files, 'diff.patch') ?? createHash('sha256').update('').digest('hex')
  const models = [
    report.agent.model,
    report.cost.tokens?.model ?? null,
    ...(report.egress.transcript?.models ?? [])
  ]
    .filter((m): m is string => typeof m === 'string' && m !== '')
    .flatMap((m) => m.split(', '))
  return {
    _type: STATEMENT_TYPE,
    subject: [{ name: 'diff.patch', digest: { sha256: diffSha } }],
    predicateType: PREDICATE_TYPE,
    predicate: {
      runId: report.runId,
      outcome: report.outcome,
      startedAt: report.startedAt,
      finishedAt: report.finishedAt,
      repo: { baseSha: report.repo.baseSha, headSha: report.repo.headSha, ref: report.repo.ref },
      image: {
        ref: report.image.ref,
        id: report.image.id,
        baseDigests: report.image.baseDigests,
        dockerfileSha256: report.image.dockerfileSha256
      },
      dependencies: report.dependencies.map((d) => ({ path: d.path, sha256: d.sha256 })),
      task: { sha256: report.task.sha256 },
      transcript: { sha256: boundOf(files, 'transcript.jsonl') },
      models: [...new Set(models)].sort(),
      tests: { reportSha256: boundOf(files, 'tests.json') },
      policyFile: {
        path: report.policy.source.path,
        commit: report.policy.source.commit,
        blobSha: report.policy.source.blobSha
      },
      sandbox: {
        ...((report.sandbox.applied ?? {
          source: 'plan',
          runtime: report.sandbox.runtime,
          network: report.sandbox.network,
          user: report.sandbox.user,
          readOnlyRootfs: report.sandbox.readOnlyRootfs,
          capDrop: report.sandbox.capDrop,
          noNewPrivileges: report.sandbox.noNewPrivileges,
          init: report.sandbox.init,
          memoryBytes: report.sandbox.memory,
          cpus: report.sandbox.cpus,
          pidsLimit: report.sandbox.pidsLimit
        }) as unknown as Record<string, unknown>),
        // The workspace-size filesystem as it was made (size, whether the kernel enforced it).
        ...(report.sandbox.workspace !== undefined ? { workspace: report.sandbox.workspace } : {})
      },
      egress: { ledgerSha256: boundOf(files, 'egress.jsonl') },
      files
    }
  }
}

/** Writes provenance.json for the folder (after every other evidence file is written). */
export async function writeProvenance(outDir: string): Promise<Statement> {
  await fs.promises.rm(path.join(outDir, PROVENANCE_BUNDLE_FILE), { force: true })
  const statement = buildStatement(outDir)
  await fs.promises.writeFile(
    path.join(outDir, PROVENANCE_FILE),
    JSON.stringify(statement, null, 2) + '\n'
  )
  return statement
}

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
  return pairs
    .filter(([, a, b]) => a !== b)
    .map(([k]) => `predicate.${k}: differs from report.json`)
}

function safeRelative(p: string): boolean {
  return (
    p !== '' &&
    p.length <= 4096 &&
    !p.startsWith('/') &&
    !p.includes('\\') &&
    // eslint-disable-next-line no-control-regex
    !/[\u0000-\u001f]/.test(p) &&
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
  if (problems.length === 0) problems.push(...reportAgrees(outDir, statement.predicate))
  return { ok: problems.length === 0, problems, statement, matched }
}

/** Evidence that does not match its statement: refused by the modes that act on it. */
export class EvidenceMismatchError extends Error {
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
