import type { GitHubClient } from './client.js'
import { hasStatus } from './client.js'

/** One write the action makes (or, in a dry run, would make). */
export interface WriteCall {
  /** Octokit route, e.g. `POST /repos/{owner}/{repo}/statuses/{sha}`. */
  route: string
  params: Record<string, unknown>
}

/**
 * Every write to GitHub goes through here. In a dry run the call is recorded with its exact
 * payload and answered with `fake`; nothing is sent (the client refuses writes as well).
 */
export class Writes {
  readonly calls: WriteCall[] = []
  constructor(
    private readonly octokit: GitHubClient,
    readonly dryRun: boolean
  ) {}

  async send<T>(route: string, params: Record<string, unknown>, fake: T): Promise<T> {
    this.calls.push({ route, params })
    if (this.dryRun) return fake
    const res = await this.octokit.request(route, params)
    return res.data as T
  }
}

export interface Identity {
  login: string
}

/** The login the GitHub Actions token acts as (`GET /user` is refused to installation tokens). */
export const ACTIONS_BOT = 'github-actions[bot]'

/**
 * Who the token is: a personal or user token answers `GET /user`; an installation token (the
 * workflow's GITHUB_TOKEN) is refused there and acts as github-actions[bot].
 */
export async function resolveIdentity(octokit: GitHubClient): Promise<Identity> {
  try {
    const res = await octokit.request('GET /user')
    return { login: res.data.login }
  } catch (error) {
    if (hasStatus(error, 403, 404)) return { login: ACTIONS_BOT }
    throw error
  }
}
