import type { Logger } from '../../log.js'
import type { GitHubClient } from '../client/client.js'
import { hasStatus } from '../client/client.js'
import type { RunEvidence } from '../../report/evidence-folder.js'
import { renderReview } from '../../report/comment.js'
import { isSuperseded, sameEvidence, supersededBody } from './marker.js'
import { ownReports } from './reports.js'
import type { ReviewInfo } from './reports.js'
import type { Marker } from './marker.js'
import type { Identity, Writes } from '../client/writes.js'
import { placeFindings, placeThreats, pullFiles } from './review-comments.js'
import type { Placement } from './review-comments.js'
import { recheckReview } from '../../threat-review/review.js'

export interface PublishTarget {
  owner: string
  repo: string
  pullNumber: number
}

export interface PublishOptions {
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
  body?: string
  /** The same evidence's review was there already (updated in place, or left as it was). */
  republished?: boolean
  /** The review shows only part of the diff (its gate line and marker say so). */
  partial?: boolean
}

const DUPLICATE_BODY =
  '_This entry duplicated another Agent Airlock report for the same run and was emptied; see the other one._'

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/**
 * Posts a run's comment as a pull request review — once per run (the publish mode then sets
 * the gate status).
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
  // The threat review, read again from the hash-checked diff: a stronger verdict than the
  // report's (an edited artifact) is the one shown and gated on.
  const full = evidence.full
  const threatReview = await recheckReview(full.threatReview, evidence.patch, {
    diffSha256: full.diff.sha256,
    secrets: full.policy.violations
      .filter((v) => v.rule === 'secret-in-diff')
      .map((v) => ({ path: v.path, detail: v.detail })),
    unread: full.diff.totalFiles - full.diff.filesInPatch
  })
  if (threatReview !== full.threatReview) log.warn(`threat review: ${threatReview?.notes[0] ?? ''}`)
  evidence = {
    ...evidence,
    full: { ...full, ...(threatReview !== undefined ? { threatReview } : {}) }
  }
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
    const mine = await ownReports(octokit, t, t.pullNumber, me)
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
        submittedAt: null,
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

  const mine = await ownReports(octokit, t, t.pullNumber, me)
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

  return { reviewId: review.id, reviewUrl: review.html_url, body, republished, partial }
}
