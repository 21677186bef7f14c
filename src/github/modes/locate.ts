// `locate` mode, the step before the approval job downloads the evidence: for the approval this
// event carries (a comment, a review, or the review relay's finished run), finds the action's own
// latest report on its pull request and outputs where that report's evidence is:
// `evidence-run-id` (the run whose artifact holds it) and `evidence-artifact` (its name). Both
// are empty when the event is no approval or the pull request has no report (approve then
// refuses with the reason). It writes nothing.
import * as core from '@actions/core'
import { ConfigurationError } from '../../errors.js'
import { repositoryOf } from '../../event.js'
import type { InputReader } from '../../input-read.js'
import { INPUT } from '../../input-names.js'
import type { Logger } from '../../log.js'
import { OUTPUT } from '../client/run-outputs.js'
import { resolveIdentity } from '../client/writes.js'
import { approvalFromFinishedRun, approvalRequest } from '../gate/approval-request.js'
import { evidenceLocation, latestReport } from '../review/reports.js'
import { connect } from './common.js'
import { getGitHubInputs } from './inputs.js'
import type { ModeEnv } from './inputs.js'

export async function locateMode(read: InputReader, log: Logger, env: ModeEnv): Promise<void> {
  const inputs = getGitHubInputs(read, env.workspace, { tokenRequired: true })
  const event = env.event
  const repo = repositoryOf(event)
  core.setOutput(OUTPUT.evidenceRunId, '')
  core.setOutput(OUTPUT.evidenceArtifact, '')
  const direct = approvalRequest(event)
  if (direct === null && event.name !== 'workflow_run') {
    log.info(`locate: this ${event.name || 'event'} is not an approval; nothing to download`)
    return
  }
  const { octokit } = connect(inputs, env, log, true)
  const me = await resolveIdentity(octokit, inputs.appSlug)
  const requests = direct !== null ? [direct] : await approvalFromFinishedRun(octokit, me, event)
  const req = requests[0]
  if (req === undefined) {
    log.info('locate: no approval to check; nothing to download')
    return
  }
  const report = await latestReport(octokit, repo, req.pullNumber, me)
  if (report === null) {
    log.info(`locate: pull request #${req.pullNumber} has no Agent Airlock report`)
    return
  }
  const where = evidenceLocation(report.marker)
  if (where === null) {
    throw new ConfigurationError(
      INPUT.mode,
      `the latest report's run id "${report.marker.runId}" names no workflow run (a run-id input chose it); approve without downloading the evidence, or keep the default run-id`
    )
  }
  core.setOutput(OUTPUT.evidenceRunId, where.runId)
  core.setOutput(OUTPUT.evidenceArtifact, where.artifact)
  log.info(
    `locate: the latest report on #${req.pullNumber} is run ${report.marker.runId}; its evidence is the artifact ${where.artifact} of run ${where.runId}`
  )
}
