// The workflow run's event, parsed once at the edge: the one reader of GITHUB_EVENT_PATH and of
// the runner's GITHUB_* variables that describe the event. Every later stage receives the typed
// `RunEvent` (or a value taken from it), never the file or the environment.
import * as fs from 'node:fs'
import { isPlainObject } from './plain-object.js'

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/

/** The pull request the event is about (pull_request*, or an issue_comment on a pull request). */
export interface EventPullRequest {
  /** The pull request's number. */
  number: number | undefined
  /** `pull_request.base.sha` (absent on an issue_comment, whose payload has no pull request). */
  baseSha?: string
  /** `pull_request.head.sha`, only on pull_request* events (the head the run works on). */
  headSha?: string
  /** owner/name of the base repository. */
  baseRepository?: string
  /** owner/name of the head repository; null when it was deleted (a deleted fork). */
  headRepository: string | null
  /**
   * Whether the head lives in another repository than the base. A deleted head repository is a
   * fork: nothing says it was this repository, and a fork is the safe answer. The one place this
   * is decided: the isolation tier and the presets read it from here. Null when the payload does
   * not say (an issue_comment names the pull request, not its repositories).
   */
  fork: boolean | null
  /** Login of the pull request's author, when the payload has it. */
  author?: string
}

export interface RunEvent {
  /** GITHUB_EVENT_NAME; '' outside GitHub Actions. */
  name: string
  /** The webhook payload ({} when there is none or it cannot be read). */
  payload: Record<string, unknown>
  /** GITHUB_REPOSITORY split, when it is owner/name. */
  repository?: { owner: string; repo: string }
  /** GITHUB_SHA: the commit the workflow run is for (the merge commit on pull_request). */
  sha?: string
  /** GITHUB_REF, e.g. refs/heads/main or refs/pull/7/merge. */
  ref?: string
  /** GITHUB_REF_NAME: the branch a workflow_dispatch ran on. */
  refName?: string
  /** `repository.default_branch` of the payload. */
  defaultBranch?: string
  /** GITHUB_ACTOR. */
  actor?: string
  /** GITHUB_SERVER_URL without a trailing slash (default https://github.com). */
  serverUrl: string
  /** GITHUB_RUN_ID and GITHUB_RUN_ATTEMPT (default 1), on a runner. */
  run?: { id: string; attempt: string }
  pullRequest?: EventPullRequest
}

/** The events whose payload carries `pull_request.head.sha` of the pull request run mode works on. */
export function isPullRequestEvent(eventName: string | undefined): boolean {
  return (
    eventName !== undefined && /^pull_request(_target|_review|_review_comment)?$/.test(eventName)
  )
}

function obj(v: unknown): Record<string, unknown> | undefined {
  return isPlainObject(v) ? v : undefined
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined
}

function sha(v: unknown): string | undefined {
  return typeof v === 'string' && SHA.test(v) ? v : undefined
}

function pullRequestOf(
  name: string,
  payload: Record<string, unknown>
): EventPullRequest | undefined {
  const pr = obj(payload.pull_request)
  if (pr) {
    const head = obj(pr.head)
    const base = obj(pr.base)
    const headRepo = head && 'repo' in head ? obj(head.repo) : undefined
    const headRepository = str(headRepo?.full_name) ?? null
    const baseRepository = str(obj(base?.repo)?.full_name)
    const author = str(obj(pr.user)?.login)
    const headSha = isPullRequestEvent(name) ? sha(head?.sha) : undefined
    const baseSha = sha(base?.sha)
    return {
      number: typeof pr.number === 'number' ? pr.number : undefined,
      ...(baseSha !== undefined ? { baseSha } : {}),
      ...(headSha !== undefined ? { headSha } : {}),
      ...(baseRepository !== undefined ? { baseRepository } : {}),
      headRepository,
      fork: headRepository === null || headRepository !== baseRepository,
      ...(author !== undefined ? { author } : {})
    }
  }
  // A comment on a pull request: the issue payload names the pull request, not its repositories.
  const issue = obj(payload.issue)
  if (issue && obj(issue.pull_request) && typeof issue.number === 'number') {
    const author = str(obj(issue.user)?.login)
    return {
      number: issue.number,
      headRepository: null,
      // Unknown from the payload: the command mode reads the pull request itself.
      fork: null,
      ...(author !== undefined ? { author } : {})
    }
  }
  return undefined
}

/** The event from the runner's variables and the payload's text (pure; unreadable payload: {}). */
export function parseEvent(env: NodeJS.ProcessEnv, payloadText: string | undefined): RunEvent {
  let payload: Record<string, unknown> = {}
  if (payloadText !== undefined) {
    try {
      payload = obj(JSON.parse(payloadText)) ?? {}
    } catch {
      payload = {}
    }
  }
  const name = env.GITHUB_EVENT_NAME ?? ''
  const m = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/.exec(env.GITHUB_REPOSITORY ?? '')
  const defaultBranch = str(obj(payload.repository)?.default_branch)
  const pullRequest = pullRequestOf(name, payload)
  return {
    name,
    payload,
    ...(m ? { repository: { owner: m[1], repo: m[2] } } : {}),
    ...(sha(env.GITHUB_SHA) !== undefined ? { sha: env.GITHUB_SHA } : {}),
    ...(str(env.GITHUB_REF) !== undefined ? { ref: env.GITHUB_REF } : {}),
    ...(str(env.GITHUB_REF_NAME) !== undefined ? { refName: env.GITHUB_REF_NAME } : {}),
    ...(defaultBranch !== undefined ? { defaultBranch } : {}),
    ...(str(env.GITHUB_ACTOR) !== undefined ? { actor: env.GITHUB_ACTOR } : {}),
    serverUrl: (env.GITHUB_SERVER_URL ?? 'https://github.com').replace(/\/+$/, ''),
    ...(str(env.GITHUB_RUN_ID) !== undefined
      ? { run: { id: env.GITHUB_RUN_ID as string, attempt: env.GITHUB_RUN_ATTEMPT ?? '1' } }
      : {}),
    ...(pullRequest !== undefined ? { pullRequest } : {})
  }
}

/** The event of this process: GITHUB_EVENT_PATH read once (the only reader of that file). */
export function readRunEvent(env: NodeJS.ProcessEnv = process.env): RunEvent {
  const file = env.GITHUB_EVENT_PATH
  let text: string | undefined
  if (file !== undefined && file !== '') {
    try {
      text = fs.readFileSync(file, 'utf8')
    } catch {
      text = undefined
    }
  }
  return parseEvent(env, text)
}

/** No event: the CLI on a machine (the runner's variables are not the CLI's business). */
export const LOCAL_EVENT: RunEvent = { name: '', payload: {}, serverUrl: 'https://github.com' }
