// `apply` mode: the approved diff of the downloaded evidence committed onto the pull request's
// branch (or a new branch with a draft pull request on workflow_dispatch).
import * as core from '@actions/core'
import { ConfigurationError } from '../../errors.js'
import type { InputReader } from '../../input-read.js'
import { INPUT } from '../../input-names.js'
import type { Logger } from '../../log.js'
import { readVerifiedEvidence } from '../../report/evidence-folder.js'
import { applyRun } from '../apply/apply.js'
import { OUTPUT } from '../client/run-outputs.js'
import { resolveIdentity } from '../client/writes.js'
import { connect, reportDryRun } from './common.js'
import { getGitHubInputs } from './inputs.js'
import type { ModeEnv } from './inputs.js'

export async function applyMode(read: InputReader, log: Logger, env: ModeEnv): Promise<void> {
  const inputs = getGitHubInputs(read, env.workspace, { tokenRequired: true })
  // Only evidence that matches its provenance statement is applied (a changed byte refuses).
  const evidence = readVerifiedEvidence(inputs.outputDir, {
    input: INPUT.outputDir,
    fix: "point output-dir at the folder the run's artifact was downloaded into"
  })
  if (evidence === null)
    throw new ConfigurationError(
      INPUT.outputDir,
      `${inputs.outputDir} does not exist; download the run's artifact into output-dir before apply`
    )
  const { octokit, writes } = connect(inputs, env, log)
  const me = await resolveIdentity(octokit, inputs.appSlug)
  const result = await applyRun(
    octokit,
    writes,
    env.event,
    evidence,
    {
      repoPath: inputs.path,
      gateContext: inputs.gateContext,
      branch: inputs.branch,
      base: inputs.base,
      tempRoot: env.runner.temp
    },
    log,
    inputs.pullRequest,
    me
  )
  if (inputs.dryRun) {
    await reportDryRun(env, inputs.outputDir, 'apply', writes.calls, { result })
    return
  }
  core.setOutput(OUTPUT.commitSha, result.commitSha)
  if (result.pullRequestUrl) core.setOutput(OUTPUT.pullRequestUrl, result.pullRequestUrl)
  log.info(`committed ${result.commitSha} on ${result.branch}`)
}
