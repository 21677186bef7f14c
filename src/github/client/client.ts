import { RefusedError } from '../../errors.js'
import { getOctokit } from '@actions/github'
import { retry } from '@octokit/plugin-retry'
import { throttling } from '@octokit/plugin-throttling'
import type { Logger } from '../../log.js'

export type GitHubClient = ReturnType<typeof getOctokit>

export interface ClientOptions {
  token: string
  /** REST base URL (the event's GITHUB_API_URL); default https://api.github.com. */
  baseUrl?: string
  log: Logger
  /** Retries of a 5xx answer (with growing delays) before giving up. */
  retries?: number
  /**
   * Refuse every request that is not a read (`GET`/`HEAD`): the guarantee behind `dry-run`, kept
   * here so that no code path can write by accident.
   */
  readOnly?: boolean
  /** The fetch the requests go through (tests give a fake); default the global fetch. */
  fetch?: typeof fetch
}

/** Waits longer than this for a rate limit are not worth it: the step fails and says why. */
const MAX_RATE_LIMIT_WAIT_SECONDS = 15 * 60

/** A GitHub request that failed for a reason the user can act on. */
export class GitHubRequestError extends RefusedError {
  constructor(
    readonly status: number,
    readonly method: string,
    readonly url: string,
    message: string
  ) {
    super(message)
    this.name = 'GitHubRequestError'
  }
}

/** A write that `dry-run` forbade. Reaching it is a bug: dry runs record payloads instead. */
export class ReadOnlyViolation extends Error {
  constructor(method: string, url: string) {
    super(`dry-run: refused to send ${method} ${url} (no write may reach GitHub)`)
    this.name = 'ReadOnlyViolation'
  }
}

const HINTS: Record<number, string> = {
  401: 'the token was rejected; check `github-token`',
  403: 'the token lacks a permission; give the job `pull-requests: write` and `statuses: write` (publish, approve) or `contents: write` (apply)',
  404: 'not found, or not visible to this token',
  409: 'conflict with the current state of the repository',
  422: 'GitHub rejected the request as invalid'
}

/**
 * The Octokit client of every mode: `@actions/github` (REST methods, pagination, the runner's
 * proxy settings) plus retry (5xx and network errors, with backoff; 4xx are not retried) and
 * throttling (primary and secondary rate limits honoured through `retry-after` / reset headers).
 */
export function createClient(options: ClientOptions): GitHubClient {
  const { log } = options
  const baseUrl = (options.baseUrl ?? 'https://api.github.com').replace(/\/+$/, '')
  const octokit = getOctokit(
    options.token,
    {
      baseUrl,
      ...(options.fetch !== undefined ? { request: { fetch: options.fetch } } : {}),
      retry: { retries: options.retries ?? 3 },
      throttle: {
        onRateLimit: (retryAfter: number, opts: { method: string; url: string }, _o, count) => {
          if (count >= 3 || retryAfter > MAX_RATE_LIMIT_WAIT_SECONDS) return false
          log.warn(`rate limit reached on ${opts.method} ${opts.url}; waiting ${retryAfter} s`)
          return true
        },
        onSecondaryRateLimit: (
          retryAfter: number,
          opts: { method: string; url: string },
          _o,
          count
        ) => {
          if (count >= 3 || retryAfter > MAX_RATE_LIMIT_WAIT_SECONDS) return false
          log.warn(
            `secondary rate limit on ${opts.method} ${opts.url}; waiting ${retryAfter} s as GitHub asks`
          )
          return true
        }
      }
    },
    retry,
    throttling
  )
  octokit.hook.before('request', (req) => {
    if (options.readOnly && req.method !== 'GET' && req.method !== 'HEAD' && !isGraphqlQuery(req)) {
      throw new ReadOnlyViolation(req.method, req.url)
    }
  })
  octokit.hook.error('request', (error, req) => {
    if (error instanceof ReadOnlyViolation) throw error
    const status = (error as { status?: unknown }).status
    if (typeof status === 'number' && status >= 400) {
      const body = (error as { response?: { data?: unknown } }).response?.data
      const detail =
        body && typeof body === 'object' && 'message' in body ? String(body.message) : error.message
      const url = (error as { request?: { url?: unknown } }).request?.url
      const where = typeof url === 'string' ? url.replace(baseUrl, '') : req.url
      const hint = HINTS[status] ?? (status >= 500 ? 'GitHub failed; retried and gave up' : '')
      throw new GitHubRequestError(
        status,
        req.method,
        where,
        `GitHub answered ${status} to ${req.method} ${where}: ${detail}${hint ? ` (${hint})` : ''}`
      )
    }
    throw error
  })
  return octokit
}

/** Whether a request failed with this HTTP status. */
export function hasStatus(error: unknown, ...statuses: number[]): boolean {
  const status = (error as { status?: unknown } | null)?.status
  return typeof status === 'number' && statuses.includes(status)
}

/** A GraphQL request that only reads (`query`, not `mutation`): allowed in a dry run. */
function isGraphqlQuery(req: { method: string; url: string; query?: unknown }): boolean {
  return (
    req.method === 'POST' &&
    /\/graphql$/.test(req.url) &&
    typeof req.query === 'string' &&
    /^\s*(query\b|\{)/.test(req.query)
  )
}
