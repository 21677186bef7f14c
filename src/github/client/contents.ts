import { Buffer } from 'node:buffer'
import { ConfigurationError, InfrastructureError } from '../../errors.js'
import type { GitHubClient } from './client.js'
import { hasStatus } from './client.js'

/** A file of the repository at a revision, as the contents API gives it. */
export interface FileAtRef {
  /** Git blob SHA. */
  sha: string
  content: Buffer
}

/** Reads one file at a revision; null when the revision has no such file. */
export type FileReader = (path: string, ref: string) => Promise<FileAtRef | null>

/**
 * GitHub's contents endpoint on the Octokit client (retry and throttling from `createClient`),
 * read only. Fails closed: a missing revision is a `ConfigurationError` naming `refInput` (the
 * input the revision came from); a directory, symlink or submodule is not a file; anything else
 * GitHub answers is an `InfrastructureError`.
 */
export function contentsReader(
  client: GitHubClient,
  options: { repository: string; refInput: string }
): FileReader {
  const [owner, repo] = options.repository.split('/')
  if (!owner || !repo) {
    throw new ConfigurationError('GITHUB_REPOSITORY', `"${options.repository}" is not owner/name`)
  }
  return async (filePath, ref) => {
    let data: unknown
    try {
      data = (await client.rest.repos.getContent({ owner, repo, path: filePath, ref })).data
    } catch (error) {
      if (hasStatus(error, 404)) {
        // "Not Found" is a missing file; "No commit found for the ref" is a missing revision.
        const message = (error as Error).message
        if (/no commit found/i.test(message)) {
          throw new ConfigurationError(options.refInput, `${ref}: No commit found for the ref`)
        }
        return null
      }
      throw new InfrastructureError(`GET ${filePath} at ${ref}: ${(error as Error).message}`, {
        cause: error
      })
    }
    const body = (Array.isArray(data) ? {} : data) as Record<string, unknown>
    if (body.type !== 'file' || typeof body.sha !== 'string' || typeof body.content !== 'string') {
      throw new ConfigurationError(filePath, `at ${ref} is not a regular file`)
    }
    if (body.encoding !== 'base64') {
      throw new InfrastructureError(`GET ${filePath}: unexpected encoding ${String(body.encoding)}`)
    }
    return { sha: body.sha, content: Buffer.from(body.content, 'base64') }
  }
}
