// The agent's findings as inline comments of the one review: a finding is placed when its lines
// are lines GitHub can comment on (in a hunk of the pull request's diff, on that side, a range
// within one hunk); every other finding stays in the review's body with why. The placement is
// pure; `pullFiles` reads the pull request's files it is placed on.
import { errorMessage } from '../../errors.js'
import type { Finding } from '../../evidence/findings.js'
import type { Logger } from '../../log.js'
import type { GitHubClient } from '../client/client.js'
import { codeBlock } from '../../report/escape.js'
import { findingBody } from '../../report/comment/voice.js'
import { threatCommentBody } from '../../report/comment/threat.js'
import type { ThreatFinding } from '../../threat-review/review.js'

/** A comment of `POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews` (`comments[]`). */
export interface ReviewComment {
  path: string
  body: string
  line: number
  side: 'LEFT' | 'RIGHT'
  start_line?: number
  start_side?: 'LEFT' | 'RIGHT'
}

/** A file of the pull request (`GET /pulls/{pull_number}/files`): its name and its patch. */
export interface PullFile {
  filename: string
  /** Absent for binary files and very large diffs (GitHub leaves it out). */
  patch?: string
}

export interface Placement {
  comments: ReviewComment[]
  /** Why each finding not placed could not be (by its index in report.json's findings). */
  unanchored: Map<number, string>
}

/** For each side, the lines of a file's patch that can carry a comment, with their hunk. */
export function commentableLines(patch: string): Record<'LEFT' | 'RIGHT', Map<number, number>> {
  const left = new Map<number, number>()
  const right = new Map<number, number>()
  let oldLine = 0
  let newLine = 0
  let hunk = -1
  for (const line of patch.split('\n')) {
    const h = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line)
    if (h) {
      hunk++
      oldLine = Number(h[1])
      newLine = Number(h[2])
      continue
    }
    if (hunk < 0 || line.startsWith('\\')) continue
    if (line.startsWith('+')) right.set(newLine++, hunk)
    else if (line.startsWith('-')) left.set(oldLine++, hunk)
    else {
      left.set(oldLine++, hunk)
      right.set(newLine++, hunk)
    }
  }
  return { LEFT: left, RIGHT: right }
}

/** The inline comment of a finding: its words quoted, and its suggestion as a GitHub suggestion. */
export function commentBody(f: Finding): string {
  const body = findingBody(f)
  if (f.suggestion === undefined) return body
  return `${body}\n\nSuggested change (the agent's):\n\n${codeBlock(f.suggestion.replace(/\n$/, ''), 'suggestion')}`
}

/** Places each finding on the pull request's diff, or says why it cannot be. */
export function placeFindings(
  findings: Finding[],
  files: PullFile[] | null,
  bodyOf: (f: Finding, i: number) => string = commentBody
): Placement {
  const comments: ReviewComment[] = []
  const unanchored = new Map<number, string>()
  const byName = new Map((files ?? []).map((f) => [f.filename, f]))
  findings.forEach((f, i) => {
    if (files === null) {
      unanchored.set(i, "the pull request's files could not be read")
      return
    }
    const file = byName.get(f.path)
    if (file === undefined) {
      unanchored.set(i, "the file is not part of the pull request's diff")
      return
    }
    if (file.patch === undefined) {
      unanchored.set(i, 'GitHub shows no line diff for this file')
      return
    }
    const lines = commentableLines(file.patch)
    const end = lines[f.side].get(f.line)
    if (end === undefined) {
      unanchored.set(i, `line ${f.line} (${f.side}) is not in the pull request's diff`)
      return
    }
    if (f.startLine !== undefined) {
      const startSide = f.startSide ?? f.side
      const start = lines[startSide].get(f.startLine)
      if (start === undefined || start !== end) {
        unanchored.set(i, `lines ${f.startLine}–${f.line} are not within one hunk of the diff`)
        return
      }
    }
    comments.push({
      path: f.path,
      body: bodyOf(f, i),
      line: f.line,
      side: f.side,
      ...(f.startLine !== undefined
        ? { start_line: f.startLine, start_side: f.startSide ?? f.side }
        : {})
    })
  })
  return { comments, unanchored }
}

/**
 * The threat review's findings on the pull request's diff, each with its own words; a finding
 * about a whole file (no line) stays in the review's body.
 */
export function placeThreats(threats: ThreatFinding[], files: PullFile[] | null): Placement {
  const withLine = threats.flatMap((f, i) => (f.line !== null ? [{ f, i }] : []))
  const placed = placeFindings(
    withLine.map(({ f }) => ({
      path: f.path,
      line: f.line as number,
      side: f.side,
      severity: f.severity === 'high' ? 'error' : 'warning',
      body: ''
    })),
    files,
    (_, k) => threatCommentBody(withLine[k].f)
  )
  const unanchored = new Map<number, string>()
  threats.forEach((f, i) => {
    if (f.line === null) unanchored.set(i, 'about the file as a whole')
  })
  for (const [k, why] of placed.unanchored) unanchored.set(withLine[k].i, why)
  return { comments: placed.comments, unanchored }
}

/** The pull request's files with their patches (null when they cannot be read: all in the body). */
export async function pullFiles(
  octokit: GitHubClient,
  t: { owner: string; repo: string; pullNumber: number },
  log: Logger
): Promise<PullFile[] | null> {
  try {
    const files = await octokit.paginate(octokit.rest.pulls.listFiles, {
      owner: t.owner,
      repo: t.repo,
      pull_number: t.pullNumber,
      per_page: 100
    })
    return files.map((f) => ({
      filename: f.filename,
      ...(typeof f.patch === 'string' ? { patch: f.patch } : {})
    }))
  } catch (error) {
    log.warn(
      `could not read the pull request's files (${errorMessage(error)}): the findings stay in the review's body`
    )
    return null
  }
}
