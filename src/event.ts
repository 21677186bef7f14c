// The workflow run's event, parsed once at the edge: the one reader of GITHUB_EVENT_PATH and of
// the runner's GITHUB_* variables that describe the event. Every later stage receives the typed
// `RunEvent` (or a value taken from it), never the file or the environment: the payload itself
// does not leave this file, only the fields read from it here.
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

/** Who did something in the event: a user or a bot (`type` as GitHub states it, '' when absent). */
export interface EventActor {
  login: string
  type: string
}

/** The comment of an issue_comment or pull_request_review_comment event. */
export interface EventComment {
  /** The comment's id (absent when the payload does not give one as a number). */
  id?: number
  body: string
  author: EventActor
  /** When it was posted, as GitHub states it. */
  createdAt?: string
  /** pull_request_review_comment: the comment it replies to (the thread's first), when a reply. */
  inReplyToId?: number
}

/**
 * The review of a pull_request_review event, in the shape of the API's review object (so one
 * reader reads both the event's review and the reviews the API lists).
 */
export interface EventReview {
  id?: number
  state: string
  body?: string | null
  user?: { login: string; type?: string } | null
  commit_id?: string | null
  submitted_at?: string | null
}

/** The finished run a `workflow_run` event is about: its head commit and where that comes from. */
export interface FinishedRun {
  id: number
  headSha: string
  /** owner/name of the repository the head commit comes from (a fork for fork pull requests). */
  headRepository: string
  /** The event that started the run (pull_request, pull_request_review, issue_comment, ...). */
  event: string
  conclusion: string | null
}

export interface RunEvent {
  /** GITHUB_EVENT_NAME; '' outside GitHub Actions. */
  name: string
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
  /** GITHUB_API_URL without a trailing slash, when set (the client's default: api.github.com). */
  apiUrl?: string
  /** The payload's `action` (created, edited, submitted, ...). */
  action?: string
  /** The payload's `sender`: who caused the event (the person who started a workflow_dispatch). */
  sender?: EventActor
  /** issue_comment, pull_request_review_comment: the comment. */
  comment?: EventComment
  /** pull_request_review: the review. */
  review?: EventReview
  /** workflow_run: the finished run (absent when the payload is malformed). */
  workflowRun?: FinishedRun
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

function actor(v: unknown): EventActor | undefined {
  const o = obj(v)
  return typeof o?.login === 'string' ? { login: o.login, type: String(o.type ?? '') } : undefined
}

function commentOf(name: string, payload: Record<string, unknown>): EventComment | undefined {
  if (name !== 'issue_comment' && name !== 'pull_request_review_comment') return undefined
  const c = obj(payload.comment)
  const author = actor(c?.user)
  if (!c || typeof c.body !== 'string' || author === undefined) return undefined
  const reply = name === 'pull_request_review_comment' ? c.in_reply_to_id : undefined
  return {
    ...(typeof c.id === 'number' ? { id: c.id } : {}),
    body: c.body,
    author,
    ...(typeof c.created_at === 'string' ? { createdAt: c.created_at } : {}),
    ...(typeof reply === 'number' && Number.isSafeInteger(reply) ? { inReplyToId: reply } : {})
  }
}

function reviewOf(name: string, payload: Record<string, unknown>): EventReview | undefined {
  const r = name === 'pull_request_review' ? obj(payload.review) : undefined
  if (!r) return undefined
  const user = actor(r.user)
  return {
    state: String(r.state),
    ...(typeof r.id === 'number' ? { id: r.id } : {}),
    ...(typeof r.body === 'string' ? { body: r.body } : {}),
    ...(user !== undefined ? { user } : {}),
    ...(typeof r.commit_id === 'string' ? { commit_id: r.commit_id } : {}),
    ...(typeof r.submitted_at === 'string' ? { submitted_at: r.submitted_at } : {})
  }
}

function workflowRunOf(name: string, payload: Record<string, unknown>): FinishedRun | undefined {
  if (name !== 'workflow_run') return undefined
  const run = obj(payload.workflow_run)
  const headRepo = obj(run?.head_repository)
  if (
    !run ||
    typeof run.id !== 'number' ||
    typeof run.head_sha !== 'string' ||
    !/^[0-9a-f]{40}$/.test(run.head_sha) ||
    typeof headRepo?.full_name !== 'string'
  )
    return undefined
  return {
    id: run.id,
    headSha: run.head_sha,
    headRepository: headRepo.full_name,
    event: typeof run.event === 'string' ? run.event : '',
    conclusion: typeof run.conclusion === 'string' ? run.conclusion : null
  }
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
  const sender = actor(payload.sender)
  const comment = commentOf(name, payload)
  const review = reviewOf(name, payload)
  const workflowRun = workflowRunOf(name, payload)
  return {
    name,
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
    ...(pullRequest !== undefined ? { pullRequest } : {}),
    ...(str(env.GITHUB_API_URL) !== undefined
      ? { apiUrl: (env.GITHUB_API_URL as string).replace(/\/+$/, '') }
      : {}),
    ...(str(payload.action) !== undefined ? { action: payload.action as string } : {}),
    ...(sender !== undefined ? { sender } : {}),
    ...(comment !== undefined ? { comment } : {}),
    ...(review !== undefined ? { review } : {}),
    ...(workflowRun !== undefined ? { workflowRun } : {})
  }
}

/** The event's repository; the GitHub modes run only where GITHUB_REPOSITORY is owner/name. */
export function repositoryOf(event: RunEvent): { owner: string; repo: string } {
  if (event.repository === undefined)
    throw new Error('GITHUB_REPOSITORY is not owner/name: the modes run only on a GitHub runner')
  return event.repository
}

/** The page of this workflow run, when the event names one. */
export function runUrl(event: RunEvent): string | undefined {
  const r = event.repository
  return event.run === undefined || r === undefined
    ? undefined
    : `${event.serverUrl}/${r.owner}/${r.repo}/actions/runs/${event.run.id}`
}

/** The event of this process: GITHUB_EVENT_PATH read once (the only reader of that file). */
export function readRunEvent(env: NodeJS.ProcessEnv): RunEvent {
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
export const LOCAL_EVENT: RunEvent = { name: '', serverUrl: 'https://github.com' }
