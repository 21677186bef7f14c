import type { Logger } from '../../log.js'
import type { GitHubClient } from '../client/client.js'
import { hasStatus } from '../client/client.js'
import type { RunEvidence } from '../../report/evidence-folder.js'
import type { StatusPayload } from '../gate/gate.js'
import { currentGate, gateAfterRun, shortSha } from '../gate/gate.js'
import type { Outcome } from '../../report/report.js'
import { renderReview } from '../../report/comment.js'
import { isSuperseded, parseMarker, sameEvidence, supersededBody } from './marker.js'
import type { Marker } from './marker.js'
import type { Identity, Writes } from '../client/writes.js'
import { placeFindings, placeThreats } from './review-comments.js'
import type { Placement, PullFile } from './review-comments.js'
import { errorMessage } from '../../errors.js'

export interface PublishTarget {
  owner: string
  repo: string
  pullNumber: number
  /** Link put on the status (the workflow run), when known. */
  targetUrl?: string
}

export interface PublishOptions {
  gateContext: string
  failOutcomes: readonly Outcome[]
  /** Pause between re-reads while another publisher holds the pending review (ms). */
  settleMs?: number
  /** The line saying where the evidence is (built by the action, never read from the folder). */
  evidenceLine?: string | null
}

export interface PublishResult {
  /** Why nothing was published, when nothing was. */
  skipped?: string
  reviewId?: number
  reviewUrl?: string
  status?: StatusPayload
  body?: string
}

interface ReviewInfo {
  id: number
  login: string | null
  state: string
  body: string
  html_url: string
  marker: Marker | null
}

const DUPLICATE_BODY =
  '_This entry duplicated another Agent Airlock report for the same run and was emptied; see the other one._'

async function listReviews(octokit: GitHubClient, t: PublishTarget): Promise<ReviewInfo[]> {
  const reviews = await octokit.paginate(octokit.rest.pulls.listReviews, {
    owner: t.owner,
    repo: t.repo,
    pull_number: t.pullNumber,
    per_page: 100
  })
  return reviews.map((r) => ({
    id: r.id,
    login: r.user?.login ?? null,
    state: r.state,
    body: r.body ?? '',
    html_url: r.html_url,
    marker: parseMarker(r.body)
  }))
}

/** The action's own reviews that carry a valid marker: nobody else's markers count. */
export function ownReports(reviews: ReviewInfo[], me: Identity): ReviewInfo[] {
  return reviews.filter((r) => r.login === me.login && r.marker !== null)
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/**
 * Posts a run's comment as a pull request review and sets the gate status — once per run.
 *
 * Never duplicated: the review is first created as the identity's single PENDING review
 * (GitHub allows one per user and pull request, so a second publisher or a retried POST gets
 * 422 instead of a copy), then submitted. Whoever finds a pending review of the same run submits
 * it; whoever finds a submitted one updates it in place. A final re-read empties any duplicate
 * that slipped through, keeping the oldest. Earlier runs' reviews are marked superseded.
 */
export async function publishRun(
  octokit: GitHubClient,
  writes: Writes,
  me: Identity,
  t: PublishTarget,
  evidence: RunEvidence,
  options: PublishOptions,
  log: Logger
): Promise<PublishResult> {
  const report = evidence.report
  const repo = { owner: t.owner, repo: t.repo }
  const pr = (await octokit.rest.pulls.get({ ...repo, pull_number: t.pullNumber })).data
  if (pr.head.sha !== report.headSha) {
    return {
      skipped: `the report is for ${report.headSha.slice(0, 12)} but pull request #${t.pullNumber} is now at ${pr.head.sha.slice(0, 12)}: stale evidence is not published (the new head gets its own run)`
    }
  }
  // The agent's findings: on the lines of the pull request's diff where they can be, in the body
  // otherwise (none dropped).
  const findings = evidence.full.findings?.findings ?? []
  const threats = evidence.full.threatReview?.findings ?? []
  const files = findings.length + threats.length > 0 ? await pullFiles(octokit, t, log) : null
  const placement: Placement | null = findings.length > 0 ? placeFindings(findings, files) : null
  // The threat review's findings likewise, in words of their own.
  const threatPlacement: Placement | null = threats.length > 0 ? placeThreats(threats, files) : null
  const comments = [...(placement?.comments ?? []), ...(threatPlacement?.comments ?? [])]
  // Rendered here from the validated report and the hash-checked patch; no regex ever runs over
  // the assembled body, so nothing the agent named can remove or reorder a line of it. A review
  // that cannot show the whole diff says so in its gate line, its marker and the gate status.
  const { body, partial } = renderReview(evidence.full, evidence.patch?.toString('utf8') ?? '', {
    evidenceLine: options.evidenceLine,
    ...(placement
      ? { inline: { posted: placement.comments.length, unanchored: placement.unanchored } }
      : {}),
    ...(threatPlacement
      ? {
          threatInline: {
            posted: threatPlacement.comments.length,
            unanchored: threatPlacement.unanchored
          }
        }
      : {})
  })
  const marker: Marker = {
    runId: report.runId,
    headSha: report.headSha,
    diffSha256: report.diffSha256,
    ...(partial ? { partial: true as const } : {})
  }
  const reviewsRoute = 'POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews'
  const base = { ...repo, pull_number: t.pullNumber }
  const settle = options.settleMs ?? 1000

  let review: ReviewInfo | undefined
  let republished = false
  for (let attempt = 0; review === undefined; attempt++) {
    if (attempt > 12)
      throw new Error('could not publish the review: another publisher kept it pending')
    const mine = ownReports(await listReviews(octokit, t), me)
    // The same evidence (run, head and diff): a republish of a run with another diff is a new
    // report, with a new review and a pending gate, never an edit of the approved one.
    const sameRun = mine.filter((r) => sameEvidence(r.marker, marker))
    const submitted = sameRun.filter((r) => r.state !== 'PENDING').sort((a, b) => a.id - b.id)
    if (submitted.length > 0) {
      review = submitted[0]
      republished = true
      if (review.body !== body) {
        log.info(`updating review ${review.id} of run ${report.runId} in place`)
        await writes.send(
          'PUT /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}',
          { ...base, review_id: review.id, body },
          null
        )
      }
      break
    }
    const pending = mine.find((r) => r.state === 'PENDING')
    if (pending !== undefined && sameEvidence(pending.marker, marker)) {
      // Ours from a retried POST, or a concurrent publisher's: same run, same evidence.
      try {
        await writes.send(
          'POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/events',
          { ...base, review_id: pending.id, event: 'COMMENT', body },
          null
        )
        review = pending
      } catch (error) {
        if (!hasStatus(error, 422, 404)) throw error
        await sleep(settle) // submitted (or removed) meanwhile by the other publisher
      }
      continue
    }
    if (pending !== undefined && attempt >= 5) {
      // A pending review of this identity for another run, left by a publisher that died.
      log.warn(`removing a stale pending review ${pending.id} of run ${pending.marker?.runId}`)
      await writes
        .send(
          'DELETE /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}',
          { ...base, review_id: pending.id },
          null
        )
        .catch((error: unknown) => {
          if (!hasStatus(error, 422, 404)) throw error
        })
      continue
    }
    if (pending !== undefined) {
      await sleep(settle)
      continue
    }
    try {
      const created = await writes.send<{ id: number; html_url: string; state: string }>(
        reviewsRoute,
        {
          ...base,
          commit_id: report.headSha,
          body,
          ...(comments.length > 0 ? { comments } : {})
        },
        { id: 0, html_url: '', state: 'PENDING' }
      )
      await writes.send(
        'POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/events',
        { ...base, review_id: created.id, event: 'COMMENT', body },
        null
      )
      review = {
        id: created.id,
        login: me.login,
        state: 'COMMENTED',
        body,
        html_url: created.html_url,
        marker
      }
    } catch (error) {
      // 422: this identity already has a pending review here (another publisher, or our own POST
      // that succeeded before its answer was lost). Re-read and join it.
      if (!hasStatus(error, 422)) throw error
      log.info('a pending review already exists; re-reading the reviews')
      await sleep(settle / 4)
    }
  }

  const mine = ownReports(await listReviews(octokit, t), me)
  if (!writes.dryRun) {
    const sameRun = mine
      .filter((r) => sameEvidence(r.marker, marker) && r.state !== 'PENDING')
      .sort((a, b) => a.id - b.id)
    for (const dup of sameRun.slice(1)) {
      log.warn(`emptying duplicate review ${dup.id} of run ${report.runId}`)
      await writes.send(
        'PUT /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}',
        { ...base, review_id: dup.id, body: DUPLICATE_BODY },
        null
      )
    }
    if (sameRun[0] !== undefined) review = sameRun[0]
  }
  for (const old of mine) {
    if (sameEvidence(old.marker, marker) || old.state === 'PENDING' || isSuperseded(old.body))
      continue
    await writes.send(
      'PUT /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}',
      { ...base, review_id: old.id, body: supersededBody(old.body, report.runId) },
      null
    )
  }

  const status = gateAfterRun(
    report,
    options.failOutcomes,
    options.gateContext,
    t.targetUrl,
    (evidence.full.policy?.protected ?? []).length > 0,
    partial
  )
  const current = await currentGate(
    octokit,
    t.owner,
    t.repo,
    report.headSha,
    options.gateContext,
    me
  )
  // Only the same evidence, republished, keeps an approval: the status must be ours and name
  // this diff, and the review it was given on must be this very review.
  if (
    republished &&
    current?.state === 'success' &&
    status.state === 'pending' &&
    (current.description ?? '').includes(`for diff ${shortSha(report.diffSha256)}`)
  ) {
    log.info('this run was already approved; the gate stays green')
  } else {
    await writes.send(
      'POST /repos/{owner}/{repo}/statuses/{sha}',
      { ...repo, sha: report.headSha, ...status },
      null
    )
  }
  return { reviewId: review.id, reviewUrl: review.html_url, status, body }
}

/** The pull request's files with their patches (null when they cannot be read: all in the body). */
async function pullFiles(
  octokit: GitHubClient,
  t: PublishTarget,
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
