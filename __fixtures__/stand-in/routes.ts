/**
 * What a route of the GitHub stand-in is: a handler of one REST operation (`METHOD /path` with
 * the `/repos/{owner}/{repo}` prefix left off), given the stand-in's state and the request as
 * validated against GitHub's OpenAPI description.
 */
import type { GitHubStandIn } from '../github-stand-in.js'
import type { Pull, User } from './state.js'

export interface RouteRequest {
  /** The path parameters, decoded. */
  p: Record<string, string>
  /** The JSON body ({} when none). */
  b: Record<string, unknown>
  /** The token's user. */
  user: User
  url: URL
  /** The pull request `{pull_number}` names, when the path has one and it exists. */
  pull?: Pull
}

/** Status, JSON body and extra headers of the answer. */
export type Answer = [number, unknown, Record<string, string>?]

export type Routes = Record<string, (s: GitHubStandIn, r: RouteRequest) => Answer>

export const notFound: Answer = [404, { message: 'Not Found' }]
