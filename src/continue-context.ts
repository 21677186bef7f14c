// A follow-up run's link to the run it continues: what the command job found on the pull request
// (the action's own latest review, its marker, and the review discussion on its findings since),
// handed to the run job as one JSON input (`continue-context`), and what the run records about
// the continuation in report.json. The command mode writes it, the run's edge reads it back:
// both sides are here so neither reaches into the other.
import { ConfigurationError } from './errors.js'
import { revealHidden } from './text-filter.js'
import { isPlainObject } from './plain-object.js'

/** One review comment on the earlier run's inline findings, posted after that review. */
export interface DiscussionComment {
  /** GitHub login of its author. */
  author: string
  /** Its text as written (hidden characters made visible), capped. */
  body: string
  /** The file and line of the finding it answers, when known. */
  path: string | null
  line: number | null
  /**
   * Its author's relation to the repository as GitHub states it (`author_association`): an owner,
   * member or collaborator, or anyone else (a contributor, the fork's author, a stranger).
   */
  association?: 'collaborator' | 'other'
}

/** GitHub's `author_association` as a follow-up labels the comment. */
export function associationOf(value: unknown): DiscussionComment['association'] {
  if (typeof value !== 'string') return undefined
  return ['OWNER', 'MEMBER', 'COLLABORATOR'].includes(value) ? 'collaborator' : 'other'
}

export interface ContinueContext {
  /** The earlier run's id, head and diff, as the marker of the action's own review names them. */
  runId: string
  headSha: string
  diffSha256: string | null
  /** The earlier review's address (linked in the new review). */
  reviewUrl: string | null
  /** The discussion on the earlier run's findings since its review, oldest first (capped). */
  comments: DiscussionComment[]
  /**
   * The command was a reply in the thread of one of the earlier run's inline findings: that
   * finding (its text as posted, capped), and `comments` holds that thread's replies only.
   */
  thread?: { path: string | null; line: number | null; finding: string }
}

/** What report.json records about a continued run (`continuation`). */
export interface ContinuationRecord {
  /** The earlier run's id, head commit and diff hash (from its verified evidence). */
  runId: string
  headSha: string
  diffSha256: string | null
  /** Whether the earlier patch was applied to the workspace before the agent started. */
  carried: boolean
  /** Why it was or was not carried (one sentence, for the review). */
  note: string
  /** The earlier review, when the command found it. */
  reviewUrl?: string
  /** How many review comments the agent was given. */
  comments: number
}

/** At most this many comments, each at most this many characters, reach the run. */
export const MAX_DISCUSSION_COMMENTS = 12
export const MAX_DISCUSSION_CHARS = 2000

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const SHA1 = /^[0-9a-f]{40}$/
const SHA256 = /^[0-9a-f]{64}$/
const LOGIN = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$/

/** A comment's text as it may travel: hidden characters visible, cut to the cap. */
export function discussionText(text: string): string {
  const shown = [...revealHidden(text)]
  return shown.length > MAX_DISCUSSION_CHARS
    ? shown.slice(0, MAX_DISCUSSION_CHARS).join('') + ' […cut]'
    : shown.join('')
}

/** The context as the single-line JSON value of `continue-context`. */
export function formatContinueContext(c: ContinueContext): string {
  let comments = c.comments.slice(-MAX_DISCUSSION_COMMENTS).map((x) => ({
    ...x,
    body: discussionText(x.body),
    path: x.path === null ? null : discussionText(x.path).slice(0, 500)
  }))
  const thread =
    c.thread === undefined
      ? {}
      : {
          thread: {
            path: c.thread.path === null ? null : discussionText(c.thread.path).slice(0, 500),
            line: c.thread.line,
            finding: discussionText(c.thread.finding)
          }
        }
  // An input holds at most 64 KiB: the oldest comments give way first.
  for (;;) {
    const text = JSON.stringify({ ...c, ...thread, comments })
    if (Buffer.byteLength(text, 'utf8') <= MAX_CONTEXT_BYTES || comments.length === 0) return text
    comments = comments.slice(1)
  }
}

/** The longest `continue-context` value written, in UTF-8 bytes (an input holds at most 64 KiB). */
const MAX_CONTEXT_BYTES = 60_000

/**
 * Reads `continue-context` back: every field checked for type and shape (anything else is a
 * ConfigurationError naming the input), the comments capped and made visible again.
 */
export function parseContinueContext(name: string, raw: string): ContinueContext {
  const bad = (what: string): ConfigurationError =>
    new ConfigurationError(
      name,
      `${what}; pass the command mode's continue-context output unchanged (or leave it empty)`
    )
  let v: unknown
  try {
    v = JSON.parse(raw)
  } catch {
    throw bad('is not JSON')
  }
  if (!isPlainObject(v)) throw bad('is not a JSON object')
  if (typeof v.runId !== 'string' || !RUN_ID.test(v.runId)) throw bad('runId is not a run id')
  if (typeof v.headSha !== 'string' || !SHA1.test(v.headSha))
    throw bad('headSha is not a commit SHA')
  if (v.diffSha256 !== null && (typeof v.diffSha256 !== 'string' || !SHA256.test(v.diffSha256)))
    throw bad('diffSha256 is not a SHA-256 or null')
  const reviewUrl =
    typeof v.reviewUrl === 'string' && /^https:\/\/[^\s<>()]{1,500}$/.test(v.reviewUrl)
      ? v.reviewUrl
      : null
  if (!Array.isArray(v.comments)) throw bad('comments is not a list')
  const comments = (v.comments as unknown[])
    .slice(-MAX_DISCUSSION_COMMENTS)
    .map((c): DiscussionComment => {
      if (!isPlainObject(c) || typeof c.author !== 'string' || !LOGIN.test(c.author))
        throw bad('a comment has no valid author')
      if (typeof c.body !== 'string') throw bad('a comment has no body')
      return {
        author: c.author,
        body: discussionText(c.body),
        path: typeof c.path === 'string' ? discussionText(c.path).slice(0, 500) : null,
        line:
          typeof c.line === 'number' && Number.isSafeInteger(c.line) && c.line > 0 ? c.line : null,
        ...(c.association === 'collaborator' || c.association === 'other'
          ? { association: c.association }
          : {})
      }
    })
  let thread: ContinueContext['thread']
  if (v.thread !== undefined && v.thread !== null) {
    const t = v.thread
    if (!isPlainObject(t) || typeof t.finding !== 'string') throw bad('thread has no finding')
    thread = {
      path: typeof t.path === 'string' ? discussionText(t.path).slice(0, 500) : null,
      line:
        typeof t.line === 'number' && Number.isSafeInteger(t.line) && t.line > 0 ? t.line : null,
      finding: discussionText(t.finding)
    }
  }
  return {
    runId: v.runId,
    headSha: v.headSha,
    diffSha256: v.diffSha256,
    reviewUrl,
    comments,
    ...(thread !== undefined ? { thread } : {})
  }
}
