// `command` mode: reads `/airlock run <task>` from an issue_comment event (or a reply in a
// review thread, or a manual run with pull-request), checks who asked and the pull request,
// acknowledges with a reaction (or a reaction and the reason), and sets outputs for the job that
// runs the agent: `run-requested`, `task`, `head-sha`, `head-repository`, `base-sha` (for
// `policy-base`), `pull-request`, `fork`, and for a follow-up (the pull request has an earlier
// run: the action's own latest review) `continue-run-id`, `continue-artifact` and
// `continue-context`. It starts nothing itself and runs nothing from the comment.
import * as core from '@actions/core'
import { formatContinueContext } from '../../continue-context.js'
import { repositoryOf, runUrl } from '../../event.js'
import type { InputReader } from '../../input-read.js'
import { INPUT } from '../../input-names.js'
import type { Logger } from '../../log.js'
import { OUTPUT } from '../client/run-outputs.js'
import { resolveIdentity } from '../client/writes.js'
import {
  acknowledgeCommand,
  decideCommand,
  dispatchCommand,
  runCommand
} from '../conversation/command.js'
import { findEarlierRun } from '../conversation/follow-up.js'
import { connect, reportDryRun } from './common.js'
import { getGitHubInputs } from './inputs.js'
import type { ModeEnv } from './inputs.js'

export async function commandMode(read: InputReader, log: Logger, env: ModeEnv): Promise<void> {
  const inputs = getGitHubInputs(read, env.workspace, { tokenRequired: true })
  const event = env.event
  const repo = repositoryOf(event)
  core.setOutput(OUTPUT.runRequested, 'false')
  const cmd = runCommand(event) ?? dispatchCommand(event, inputs.pullRequest, read(INPUT.task))
  if (cmd === null) {
    log.info(
      `command: this ${event.name || 'event'} is neither an /airlock run comment (or a reply in a review thread) nor a manual run with pull-request`
    )
    return
  }
  const { octokit, writes } = connect(inputs, env, log)
  const decision = await decideCommand(octokit, repo, cmd)
  // A follow-up continues the pull request's last Airlock run (the action's own latest review).
  const followUp = decision.accepted
    ? await findEarlierRun(
        octokit,
        repo,
        cmd.pullNumber,
        await resolveIdentity(octokit, inputs.appSlug),
        event.serverUrl,
        {
          ...(cmd.commentId !== undefined ? { commentId: cmd.commentId } : {}),
          ...(cmd.threadId !== undefined ? { threadId: cmd.threadId } : {})
        }
      )
    : null
  await acknowledgeCommand(writes, repo, cmd, decision, log, runUrl(event), followUp?.context.runId)
  if (inputs.dryRun)
    await reportDryRun(env, inputs.outputDir, 'command', writes.calls, { decision, followUp })
  core.setOutput(OUTPUT.continueRunId, followUp?.runId ?? '')
  core.setOutput(OUTPUT.continueArtifact, followUp?.artifact ?? '')
  core.setOutput(OUTPUT.continueContext, followUp ? formatContinueContext(followUp.context) : '')
  if (!decision.accepted) return
  if (followUp !== null)
    log.info(
      `continues run ${followUp.context.runId} (artifact ${followUp.artifact} of run ${followUp.runId}) with ${followUp.context.comments.length} review comment(s)`
    )
  core.setOutput(OUTPUT.runRequested, 'true')
  core.setOutput(OUTPUT.task, decision.task)
  core.setOutput(OUTPUT.headSha, decision.headSha)
  core.setOutput(OUTPUT.baseSha, decision.baseSha)
  core.setOutput(OUTPUT.headRepository, decision.headRepository)
  core.setOutput(OUTPUT.pullRequest, String(cmd.pullNumber))
  core.setOutput(OUTPUT.fork, String(decision.fork))
}
