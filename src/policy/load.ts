// Loading the policy file from the base commit: the local clone first, then the contents API.
import type { Buffer } from 'node:buffer'
import * as path from 'node:path'
import { ConfigurationError, InfrastructureError, errorMessage } from '../errors.js'
import { boundedReader } from '../input-bounds.js'
import type { InputReader } from '../input-read.js'
import { GitError, git } from '../workspace/git.js'
import { NO_POLICY, POLICY_INPUT, POLICY_PATH, parsePolicy } from './policy-file.js'
import type { LoadedPolicy } from './policy-file.js'
import { INPUT } from '../input-names.js'
import { parseTreeListing } from '../git-listing.js'

const MAX_POLICY_BYTES = 64 * 1024

/**
 * Reads a file of the repository at a revision through GitHub's contents API (the entry passes
 * `contentsReader` from github/contents.ts): null when the revision has no such file; throws when
 * the revision itself is unknown.
 */
export type ContentsApi = (
  path: string,
  ref: string
) => Promise<{ sha: string; content: Buffer } | null>

export interface LoadOptions {
  /** Local checkout whose object store is searched first. */
  repoPath: string
  /** The base revision (the pull request's base SHA); undefined → no policy file is read. */
  base: string | undefined
  /** Used when the base commit is not in the local clone (shallow checkouts). */
  api?: ContentsApi
}

/**
 * Loads the policy that applies: the file as it is in the base commit. Fails closed — a base that
 * can be found in neither the clone nor through the API, a file that is not a regular file, too
 * large, or invalid, stops the run instead of running without the policy.
 */
export async function loadPolicy(options: LoadOptions): Promise<LoadedPolicy> {
  const base = options.base
  if (base === undefined) return NO_POLICY
  if (!/^[^-\s\0][^\s\0]*$/.test(base) || base.includes('..')) {
    throw new ConfigurationError(POLICY_INPUT, `"${base}" is not a commit SHA or branch name`)
  }
  const { file, at } = await fileAtBase(
    { ...options, base },
    POLICY_PATH,
    MAX_POLICY_BYTES,
    POLICY_INPUT
  )
  return loaded(file === null ? null : { sha: file.sha, text: file.content.toString('utf8') }, at)
}

/** Where a file read at the base came from: the base as given, its commit, git or the API. */
export interface BaseAt {
  base: string
  commit: string | null
  via: 'git' | 'api'
}

/**
 * A file of the repository as it is in the base commit: the local clone first, then the contents
 * API — the one reader of the policy file and of a task file (`file` null when the base has no
 * such file). Fails closed: a base found nowhere, a file that is not a regular file or larger than
 * `maxBytes` throws (ConfigurationError naming `file`, or `input` for the base itself).
 */
export async function fileAtBase(
  options: { repoPath: string; base: string; api?: ContentsApi },
  file: string,
  maxBytes: number,
  input: string
): Promise<{ file: { sha: string; content: Buffer } | null; at: BaseAt }> {
  const base = options.base
  const commit = await localCommit(options.repoPath, base)
  if (commit !== undefined) {
    const found = await gitFile(options.repoPath, commit, file, maxBytes)
    return { file: found, at: { base, commit, via: 'git' } }
  }
  if (options.api === undefined) {
    throw new ConfigurationError(
      input,
      `the base commit ${base} is not in the local clone and there is no token to read ${file} through the API; check out with fetch-depth: 0 (or 2 for the pull request's merge commit) or give github-token`
    )
  }
  const found = await options.api(file, base).catch((error: unknown) => {
    if (error instanceof ConfigurationError || error instanceof InfrastructureError) throw error
    throw new InfrastructureError(
      `cannot read ${file} at ${base} through the API: ${errorMessage(error)}`,
      { cause: error }
    )
  })
  if (found !== null && found.content.length > maxBytes) {
    throw new ConfigurationError(file, `is larger than ${maxBytes} bytes`)
  }
  return {
    file: found === null ? null : { sha: found.sha, content: found.content },
    at: { base, commit: /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(base) ? base : null, via: 'api' }
  }
}

function loaded(file: { sha: string; text: string } | null, at: BaseAt): LoadedPolicy {
  const where = `${POLICY_PATH} (at ${at.commit ?? at.base})`
  return {
    policy: file === null ? { values: {} } : parsePolicy(file.text, where),
    record: {
      path: POLICY_PATH,
      base: at.base,
      commit: at.commit,
      blobSha: file?.sha ?? null,
      via: at.via,
      settings: [],
      overridden: []
    }
  }
}

async function localCommit(repoPath: string, base: string): Promise<string | undefined> {
  try {
    const out = await git(
      ['rev-parse', '--verify', '--quiet', '--end-of-options', `${base}^{commit}`],
      {
        cwd: repoPath
      }
    )
    return out.stdout.toString('utf8').trim()
  } catch (error) {
    if (error instanceof GitError) return undefined
    throw error
  }
}

async function gitFile(
  repoPath: string,
  commit: string,
  file: string,
  maxBytes: number
): Promise<{ sha: string; content: Buffer } | null> {
  const [entry] = parseTreeListing(
    (await git(['ls-tree', '-z', '--full-tree', commit, '--', file], { cwd: repoPath })).stdout
  )
  if (entry === undefined) return null
  if (entry.type !== 'blob' || (entry.mode !== '100644' && entry.mode !== '100755')) {
    throw new ConfigurationError(
      file,
      `at ${commit} is not a regular file (mode ${entry.mode}); commit it as a plain file`
    )
  }
  const blob = await git(['cat-file', 'blob', entry.oid], {
    cwd: repoPath,
    maxStdout: maxBytes + 1
  })
  if (blob.truncated || blob.stdout.length > maxBytes) {
    throw new ConfigurationError(file, `is larger than ${maxBytes} bytes`)
  }
  return { sha: entry.oid, content: blob.stdout }
}

/**
 * The policy for this run, from the inputs: base from `policy-base`, else the pull request event's
 * base SHA (given by the entry); `api` (read only, given by the entry when there is a token) is
 * used when the base commit is not in the clone.
 */
export async function policyForRun(options: {
  read: InputReader
  workspace: string
  /** The pull request's base SHA from the event (github/context.ts reads it), if any. */
  eventBase?: string
  api?: ContentsApi
}): Promise<LoadedPolicy> {
  const read = boundedReader(options.read)
  return loadPolicy({
    repoPath: path.resolve(options.workspace, read(INPUT.path) ?? '.'),
    base: read(POLICY_INPUT) ?? options.eventBase,
    ...(options.api !== undefined ? { api: options.api } : {})
  })
}

/** The policy file's values at `base` (the clone first, then `api`). */
export async function policyValuesAt(at: {
  repoPath: string
  base: string
  api: ContentsApi
}): Promise<Record<string, string>> {
  const loaded = await loadPolicy(at)
  return loaded.policy.values
}
