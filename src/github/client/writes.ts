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

/** A GitHub App's slug, as `app-slug` takes it (the app acts as `<slug>[bot]`). */
export const APP_SLUG = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/

/**
 * Who the token is — the identity whose reviews, markers and statuses the action believes:
 * - with `app-slug` (a GitHub App installation token, e.g. from actions/create-github-app-token):
 *   `<slug>[bot]`, as GitHub shows the app's reviews and statuses;
 * - a user token (PAT) answers `GET /user`;
 * - an installation token (the workflow's GITHUB_TOKEN or an App's) is refused there (403) and
 *   is asked GraphQL's `viewer`, which answers the bot's login; when that is not answered either,
 *   it is the workflow token, github-actions[bot].
 */
export async function resolveIdentity(octokit: GitHubClient, appSlug?: string): Promise<Identity> {
  if (appSlug !== undefined) return { login: `${appSlug}[bot]` }
  try {
    const res = await octokit.request('GET /user')
    return { login: res.data.login }
  } catch (error) {
    if (!hasStatus(error, 403, 404)) throw error
  }
  try {
    const res = await octokit.graphql<{ viewer?: { login?: unknown } }>(
      'query { viewer { login } }'
    )
    const login = res.viewer?.login
    if (typeof login === 'string' && /^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$/.test(login)) {
      return { login }
    }
  } catch (error) {
    const graphqlError = (error as { name?: unknown } | null)?.name === 'GraphqlResponseError'
    if (!graphqlError && !hasStatus(error, 401, 403, 404)) throw error
  }
  return { login: ACTIONS_BOT }
}
