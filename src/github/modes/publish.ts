// `publish` mode (and `run` with publishing): the review comment and the gate status, rendered
// from the folder's report.json and diff.patch (never its comment.md).
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
import { connect, reportDryRun } from './common.js'
import { getGitHubInputs } from './inputs.js'
import type { ModeEnv } from './inputs.js'

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
    const result = await publishRun(
      octokit,
      writes,
      me,
      { owner, repo, pullNumber, targetUrl },
      evidence,
      {
        gateContext: inputs.gateContext,
        failOutcomes: inputs.failOutcomes,
        evidenceLine: run !== null ? artifactLine(null, targetUrl) : evidenceLine
      },
      log
    )
    if (result.skipped !== undefined) {
      log.warn(`publish: ${result.skipped}`)
      continue
    }
    if (inputs.dryRun) continue
    core.setOutput(OUTPUT.commentUrl, result.reviewUrl ?? '')
    core.setOutput(OUTPUT.gateState, result.status?.state ?? '')
    log.info(
      `published review ${result.reviewId} on #${pullNumber}; gate ${result.status?.state}: ${result.status?.description}`
    )
  }
  if (inputs.dryRun) {
    await reportDryRun(env, outputDir, 'publish', writes.calls)
    log.info(
      `dry run: ${writes.calls.length} write(s) recorded in ${path.join(outputDir, DRY_RUN_FILE)}`
    )
  }
}
