import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import type { Report } from './report.js'

/**
 * provenance.json: an in-toto Statement v1 whose subject is the diff and whose predicate binds
 * what produced it (image, Dockerfile, lockfiles, task, transcript, models, commits, tests,
 * policy file, sandbox settings, egress ledger) and the SHA-256 of every evidence file of the
 * output folder. `verifyProvenance` checks a folder against it offline; a changed, missing or
 * added file is found (provenance-verify.ts). Signing (Sigstore, on GitHub) happens elsewhere, over these same bytes.
 */

export const PROVENANCE_FILE = 'provenance.json'
/** The Sigstore bundle of a signed statement (written by the publish job, when it signs). */
export const PROVENANCE_BUNDLE_FILE = 'provenance.sigstore.json'
export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1'
export const PREDICATE_TYPE =
  'https://github.com/agent-airlock/agent-airlock/schema/provenance-predicate-v1'

/** A dry run's record of the writes it would have made (publish, approve, apply). */
export const DRY_RUN_FILE = 'dry-run.json'

/**
 * Files of the output folder that are not evidence of the run and are not bound: where the
 * folder was uploaded (written after the statement), the signature over the statement, and a
 * dry run's record of what a mode would have sent (written after the statement, by a later step
 * on the same folder).
 */
export const UNBOUND_FILES = new Set([
  PROVENANCE_FILE,
  PROVENANCE_BUNDLE_FILE,
  'artifact.json',
  DRY_RUN_FILE
])

export const MAX_STATEMENT_BYTES = 4 * 1024 * 1024
export const MAX_FILES = 10_000
export const SHA256 = /^[0-9a-f]{64}$/

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
  /**
   * The threat review's verdict and the diff it judged (null: the run had none). `airlock verify`
   * checks that this diff is the statement's subject, and that report.json says the same.
   */
  threatReview?: {
    mode: string
    verdict: string
    diffSha256: string | null
    findings: number
  } | null
  /** Every evidence file of the output folder (all but provenance.json, its signature, artifact.json, dry-run.json). */
  files: BoundFile[]
}

export interface Statement {
  _type: typeof STATEMENT_TYPE
  subject: { name: string; digest: { sha256: string } }[]
  predicateType: typeof PREDICATE_TYPE
  predicate: ProvenancePredicate
}

export function fileSha256(file: string): { sha256: string; bytes: number } {
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

export interface Listing {
  files: string[]
  /** Entries that are neither regular files nor folders (symlinks, FIFOs, devices...). */
  odd: string[]
}

/** Every entry of the folder, relative with `/`, without following symlinks. */
export function listFolder(dir: string): Listing {
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

export function boundOf(files: BoundFile[], name: string): string | null {
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
      threatReview:
        report.threatReview !== undefined
          ? {
              mode: report.threatReview.mode,
              verdict: report.threatReview.verdict,
              diffSha256: report.threatReview.diffSha256,
              findings: report.threatReview.total
            }
          : null,
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
