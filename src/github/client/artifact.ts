import * as fs from 'node:fs'
import * as path from 'node:path'
import { DefaultArtifactClient } from '@actions/artifact'
import { errorMessage } from '../../errors.js'
import { runUrl } from '../../event.js'
import type { RunEvent } from '../../event.js'

/** Written into the output folder after the upload (it is not part of the artifact itself). */
export const ARTIFACT_RECORD_FILE = 'artifact.json'

/**
 * What happened to the run's artifact. The comment and the outputs are built from this: a failed
 * upload is stated, never hidden.
 */
export type ArtifactRecord =
  | {
      status: 'uploaded'
      name: string
      id: number
      /** Web page of the artifact; null outside GitHub Actions (no run/repository known). */
      url: string | null
      size: number | null
      digest: string | null
      attempts: number
    }
  | { status: 'failed'; name: string; error: string; attempts: number }
  | { status: 'skipped'; name: string; reason: string }

/** The part of `@actions/artifact`'s client this module uses (tests pass the real one). */
export interface ArtifactClient {
  uploadArtifact(
    name: string,
    files: string[],
    rootDirectory: string
  ): Promise<{ id?: number; size?: number; digest?: string }>
  getArtifact(name: string): Promise<{ artifact: { id: number; size: number; digest?: string } }>
}

export interface UploadOptions {
  name: string
  /** The run's event: the artifact's page is under its repository and run (none without one). */
  event?: RunEvent
  client?: ArtifactClient
  /** Whole create → upload → finalize sequences tried (default 3). */
  attempts?: number
  /** Wait before the 2nd attempt; doubled for each further one (default 5 s). */
  retryDelayMs?: number
  log?: (message: string) => void
}

/** The artifact's page: `<server>/<owner>/<repo>/actions/runs/<run id>/artifacts/<id>`. */
export function artifactUrl(event: RunEvent | undefined, id: number): string | null {
  const run = event !== undefined ? runUrl(event) : undefined
  return run === undefined ? null : `${run}/artifacts/${id}`
}

/**
 * Every regular file under `dir`, never following a symlink and never taking a FIFO, socket or
 * device (the folder is written by the pipeline, but nothing in it is trusted blindly).
 * `artifact.json` of an earlier upload is left out.
 */
export async function collectFiles(dir: string): Promise<string[]> {
  const files: string[] = []
  const walk = async (d: string): Promise<void> => {
    const entries = await fs.promises.readdir(d, { withFileTypes: true })
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const e of entries) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) await walk(p)
      else if (e.isFile() && !(d === dir && e.name === ARTIFACT_RECORD_FILE)) files.push(p)
    }
  }
  await walk(dir)
  return files
}

/**
 * Errors that another attempt cannot fix: a 4xx from the service (the client marks them
 * "non-retryable"), the storage quota, an unsupported server, a missing runtime token or nothing
 * to upload.
 */
export function isPermanent(error: unknown): boolean {
  const name = error instanceof Error ? error.name : ''
  if (['UsageError', 'GHESNotSupportedError', 'FilesNotFoundError'].includes(name)) return true
  const m = errorMessage(error)
  return (
    /non-retryable/i.test(m) ||
    /Unable to get the ACTIONS_(RUNTIME_TOKEN|RESULTS_URL)/.test(m) ||
    /Failed to get backend IDs/.test(m) ||
    /artifact name is not valid/i.test(m) ||
    /storage quota/i.test(m)
  )
}

/**
 * Uploads the whole output folder as one artifact.
 *
 * The client already retries the service's 5xx and 429 answers itself (5 tries). It does not
 * retry a dropped connection (ECONNRESET, ETIMEDOUT...), which it reports at once, nor a blob
 * upload that failed or stalled: those are retried here as a whole new create → upload → finalize
 * sequence. When an attempt failed while finalizing, the artifact may in fact exist (the answer
 * was lost), so the next attempt first looks it up by name instead of creating it a second time.
 *
 * Never throws: the result (uploaded or failed, with the error) is returned for the caller to
 * record, fail the step and state in the comment.
 */
export async function uploadOutputFolder(
  dir: string,
  options: UploadOptions
): Promise<ArtifactRecord> {
  const event = options.event
  const attempts = Math.max(1, options.attempts ?? 3)
  const delay = options.retryDelayMs ?? 5000
  const log = options.log ?? (() => undefined)
  const name = options.name
  let lastError: unknown
  let finalizeFailed = false
  let attempt = 0
  try {
    await fs.promises.rm(path.join(dir, ARTIFACT_RECORD_FILE), { force: true })
    const client = options.client ?? new DefaultArtifactClient()
    const files = await collectFiles(dir)
    while (attempt < attempts) {
      attempt++
      if (attempt > 1) {
        const wait = delay * 2 ** (attempt - 2)
        log(
          `artifact: attempt ${attempt - 1} failed (${errorMessage(lastError)}); retrying in ${wait} ms`
        )
        await new Promise((resolve) => setTimeout(resolve, wait))
      }
      try {
        if (finalizeFailed) {
          const found = await client.getArtifact(name).catch(() => undefined)
          if (found !== undefined) {
            log(`artifact: ${name} was finalized by the previous attempt (id ${found.artifact.id})`)
            return uploaded(name, found.artifact.id, found.artifact, attempt, event)
          }
        }
        const res = await client.uploadArtifact(name, files, dir)
        if (res.id === undefined) throw new Error('the artifact service returned no artifact id')
        return uploaded(
          name,
          res.id,
          { size: res.size ?? null, digest: res.digest ?? null },
          attempt,
          event
        )
      } catch (error) {
        lastError = error
        finalizeFailed = /FinalizeArtifact/.test(errorMessage(error))
        if (isPermanent(error)) break
      }
    }
  } catch (error) {
    lastError = error
  }
  let message = errorMessage(lastError)
  if (/already exists|\(409\)/i.test(message)) {
    message += `; another upload in this run already uses the name "${name}" (a matrix job?): set artifact-name to a name unique per job`
  }
  return { status: 'failed', name, error: message, attempts: Math.max(attempt, 1) }
}

function uploaded(
  name: string,
  id: number,
  meta: { size?: number | null; digest?: string | null },
  attempts: number,
  event: RunEvent | undefined
): ArtifactRecord {
  return {
    status: 'uploaded',
    name,
    id,
    url: artifactUrl(event, id),
    size: meta.size ?? null,
    digest: meta.digest ?? null,
    attempts
  }
}

export async function writeArtifactRecord(dir: string, record: ArtifactRecord): Promise<void> {
  await fs.promises.mkdir(dir, { recursive: true })
  await fs.promises.writeFile(
    path.join(dir, ARTIFACT_RECORD_FILE),
    JSON.stringify(record, null, 2) + '\n'
  )
}

/**
 * Reads `artifact.json` back (e.g. to render the comment). Anything missing or malformed reads as
 * "no artifact", never as an upload that succeeded.
 */
export async function readArtifactRecord(dir: string): Promise<ArtifactRecord | null> {
  let raw: unknown
  try {
    raw = JSON.parse(await fs.promises.readFile(path.join(dir, ARTIFACT_RECORD_FILE), 'utf8'))
  } catch {
    return null
  }
  if (typeof raw !== 'object' || raw === null) return null
  const r = raw as Record<string, unknown>
  if (typeof r.name !== 'string') return null
  if (r.status === 'uploaded' && Number.isSafeInteger(r.id) && (r.id as number) > 0) {
    return {
      status: 'uploaded',
      name: r.name,
      id: r.id as number,
      url: typeof r.url === 'string' && /^https?:\/\//.test(r.url) ? r.url : null,
      size: typeof r.size === 'number' ? r.size : null,
      digest: typeof r.digest === 'string' ? r.digest : null,
      attempts: typeof r.attempts === 'number' ? r.attempts : 1
    }
  }
  if (r.status === 'failed' && typeof r.error === 'string') {
    return {
      status: 'failed',
      name: r.name,
      error: r.error,
      attempts: typeof r.attempts === 'number' ? r.attempts : 1
    }
  }
  if (r.status === 'skipped' && typeof r.reason === 'string') {
    return { status: 'skipped', name: r.name, reason: r.reason }
  }
  return null
}

/**
 * Looks up an artifact of this workflow run by name, for a job that did not upload it (e.g. the
 * publish job, which knows the name from the run job's outputs). `attempts` is 0: nothing was
 * uploaded here. A missing artifact is a `failed` record, never an exception.
 */
export async function findArtifact(
  name: string,
  options: { event?: RunEvent; client?: Pick<ArtifactClient, 'getArtifact'> } = {}
): Promise<ArtifactRecord> {
  try {
    const client = options.client ?? new DefaultArtifactClient()
    const { artifact } = await client.getArtifact(name)
    return uploaded(name, artifact.id, artifact, 0, options.event)
  } catch (error) {
    return { status: 'failed', name, error: errorMessage(error), attempts: 0 }
  }
}
