// `publish` mode (and `run` with publishing): the review comment and the gate status, rendered
// from the folder's report.json and diff.patch (never its comment.md).
import { parseMarker } from '../review/marker.js'
import * as core from '@actions/core'
import * as path from 'node:path'
import { repositoryOf, runUrl } from '../../event.js'
import type { InputReader } from '../../input-read.js'
import type { Logger } from '../../log.js'
import { InvalidEvidenceError, readEvidence } from '../../report/evidence-folder.js'
import { DRY_RUN_FILE } from '../../report/provenance.js'
import { readArtifactRecord } from '../client/artifact.js'
import { artifactLine } from '../client/artifact-line.js'
import { openPullsAt } from '../client/pulls.js'
import { OUTPUT } from '../client/run-outputs.js'
import { resolveIdentity } from '../client/writes.js'
import { publishRun } from '../review/publish.js'
import type { PublishResult } from '../review/publish.js'
import { currentGate, gateAfterRun, shortSha } from '../gate/gate.js'
import type { StatusPayload } from '../gate/gate.js'
import type { GitHubClient } from '../client/client.js'
import type { Identity, Writes } from '../client/writes.js'
import type { RunEvidence } from '../../report/evidence-folder.js'
import { connect, reportDryRun } from './common.js'
import { getGitHubInputs } from './inputs.js'
import type { GitHubInputs, ModeEnv } from './inputs.js'

/**
 * On `workflow_run` (the publisher of fork pull requests) the pull requests are found by the
 * finished run's head repository and head commit, and the report must be for that commit.
 */
export async function publishMode(
  read: InputReader,
  log: Logger,
  env: ModeEnv,
  outputDirOverride?: string
): Promise<void> {
  const inputs = getGitHubInputs(read, env.workspace, { tokenRequired: true })
  const outputDir = outputDirOverride ?? inputs.outputDir
  const event = env.event
  const { owner, repo } = repositoryOf(event)
  const evidence = readEvidence(outputDir)
  const evidenceLine = artifactLine(await readArtifactRecord(outputDir), runUrl(event))
  const { octokit, writes } = connect(inputs, env, log)
  let pulls: number[]
  const run = event.workflowRun ?? null
  let targetUrl = runUrl(event)
  if (inputs.pullRequest === undefined && run !== null) {
    if (evidence.report.headSha !== run.headSha) {
      throw new InvalidEvidenceError(
        `the report is for ${evidence.report.headSha.slice(0, 12)}, but the finished run ${run.id} ran on ${run.headSha.slice(0, 12)}`
      )
    }
    pulls = await openPullsAt(octokit, owner, repo, run.headSha, run.headRepository)
    targetUrl = `${event.serverUrl}/${owner}/${repo}/actions/runs/${run.id}`
  } else {
    const n = inputs.pullRequest ?? event.pullRequest?.number
    pulls = n === undefined ? [] : [n]
  }
  if (pulls.length === 0) {
    log.warn(
      run !== null
        ? `publish: no open pull request has head ${run.headSha.slice(0, 12)} from ${run.headRepository}; nothing published`
        : `publish: the ${event.name || 'current'} event has no pull request (set pull-request); nothing published`
    )
    return
  }
  const me = await resolveIdentity(octokit, inputs.appSlug)
  for (const pullNumber of pulls) {
    const target = { owner, repo, pullNumber, serverUrl: event.serverUrl }
    const line = run !== null ? artifactLine(null, targetUrl) : evidenceLine
    const result = await publishRun(
      octokit,
      writes,
      me,
      target,
      evidence,
      { evidenceLine: line },
      log
    )
    if (result.skipped !== undefined) {
      log.warn(`publish: ${result.skipped}`)
      continue
    }
    const status = await setGate(
      { octokit, writes, me, log },
      { owner, repo },
      evidence,
      inputs,
      targetUrl,
      result
    )
    if (inputs.dryRun) continue
    core.setOutput(OUTPUT.commentUrl, result.reviewUrl ?? '')
    core.setOutput(OUTPUT.gateState, status.state)
    log.info(
      `published review ${result.reviewId} on #${pullNumber}; gate ${status.state}: ${status.description}`
    )
  }
  if (inputs.dryRun) {
    await reportDryRun(env, outputDir, 'publish', writes.calls)
    log.info(
      `dry run: ${writes.calls.length} write(s) recorded in ${path.join(outputDir, DRY_RUN_FILE)}`
    )
  }
}

/**
 * The gate status after a run's review: pending for approval, or red for a failed outcome. Only
 * the same evidence, republished, keeps an approval: the status must be ours and name this diff,
 * and the review it was given on must be this very review.
 */
async function setGate(
  at: { octokit: GitHubClient; writes: Writes; me: Identity; log: Logger },
  repo: { owner: string; repo: string },
  evidence: RunEvidence,
  inputs: GitHubInputs,
  targetUrl: string | undefined,
  review: PublishResult
): Promise<StatusPayload> {
  const report = evidence.report
  const status = gateAfterRun(
    report,
    inputs.failOutcomes,
    inputs.gateContext,
    targetUrl,
    (evidence.full.policy?.protected ?? []).length > 0,
    review.partial === true,
    // The threat review flagged the diff: the review's own marker says so (its verdict may be
    // the publisher's own reading of diff.patch), or the report does.
    parseMarker(review.body)?.threats === true ||
      (evidence.full.threatReview?.verdict ?? 'clean') !== 'clean'
  )
  const current = await currentGate(
    at.octokit,
    repo.owner,
    repo.repo,
    report.headSha,
    inputs.gateContext,
    at.me
  )
  if (
    review.republished === true &&
    current?.state === 'success' &&
    status.state === 'pending' &&
    (current.description ?? '').includes(`for diff ${shortSha(report.diffSha256)}`)
  ) {
    at.log.info('this run was already approved; the gate stays green')
  } else {
    await at.writes.send(
      'POST /repos/{owner}/{repo}/statuses/{sha}',
      { owner: repo.owner, repo: repo.repo, sha: report.headSha, ...status },
      null
    )
  }
  return status
}
