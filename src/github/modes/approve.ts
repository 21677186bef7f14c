// `approve` mode: an approval (a review, an `/airlock approve` comment, or the review relay's
// finished run) decided against the action's own latest report and recorded on the gate.
import * as core from '@actions/core'
import { repositoryOf, runUrl } from '../../event.js'
import type { InputReader } from '../../input-read.js'
import { INPUT } from '../../input-names.js'
import type { Logger } from '../../log.js'
import { readVerifiedEvidence } from '../../report/evidence-folder.js'
import type { RunEvidence } from '../../report/evidence-folder.js'
import type { GitHubClient } from '../client/client.js'
import { contentsReader } from '../client/contents.js'
import type { FileReader } from '../client/contents.js'
import { OUTPUT } from '../client/run-outputs.js'
import { resolveIdentity } from '../client/writes.js'
import type { Writes } from '../client/writes.js'
import { approvalFromFinishedRun, approvalRequest } from '../gate/approval-request.js'
import type { ApprovalRequest } from '../gate/approval-request.js'
import { decideApproval, recordApproval } from '../gate/approve.js'
import { connect, reportDryRun } from './common.js'
import { getGitHubInputs } from './inputs.js'
import type { GitHubInputs, ModeEnv } from './inputs.js'

/**
 * Reads the policy file's values at a base commit of the repository (the local clone first, then
 * `api`: the contents API on this mode's client). The entry wires in the inputs' policy loader.
 */
export type PolicyReader = (at: {
  repoPath: string
  base: string
  api: FileReader
}) => Promise<Record<string, string>>

/**
 * Evidence handed to approve: when the approval job downloaded the run's artifact into
 * `output-dir` (the folder exists), it must match its provenance statement before anything is
 * read or written, and then be the latest report's. When no evidence was downloaded (the runner
 * hands every mode the input's default whether the workflow set it or not: the folder a download
 * step made is what counts), approve decides on the action's own review and status alone.
 */
function approvalEvidence(outputDir: string): RunEvidence | undefined {
  const named = {
    input: INPUT.outputDir,
    fix: "point output-dir at the folder the run's artifact was downloaded into"
  }
  return readVerifiedEvidence(outputDir, named) ?? undefined
}

export async function approveMode(
  read: InputReader,
  log: Logger,
  env: ModeEnv,
  readPolicy: PolicyReader
): Promise<void> {
  const inputs = getGitHubInputs(read, env.workspace, { tokenRequired: true })
  const event = env.event
  const direct = approvalRequest(event)
  if (direct === null && event.name !== 'workflow_run') {
    log.info(`approve: this ${event.name || 'event'} is not an approval; nothing to do`)
    core.setOutput(OUTPUT.approved, 'false')
    return
  }
  const evidence = approvalEvidence(inputs.outputDir)
  const { octokit, writes } = connect(inputs, env, log)
  const me = await resolveIdentity(octokit, inputs.appSlug)
  const requests: ApprovalRequest[] =
    direct !== null ? [direct] : await approvalFromFinishedRun(octokit, me, event)
  if (requests.length === 0) {
    log.info(`approve: this ${event.name || 'event'} is not an approval; nothing to do`)
    core.setOutput(OUTPUT.approved, 'false')
    return
  }
  let approved = false
  for (const req of requests) {
    const at = { octokit, writes, me, env, inputs, log, readPolicy, evidence }
    approved = (await decideAndRecord(at, req)) || approved
  }
  core.setOutput(OUTPUT.approved, String(approved))
  if (inputs.dryRun) await reportDryRun(env, inputs.outputDir, 'approve', writes.calls)
}

async function decideAndRecord(
  at: {
    octokit: GitHubClient
    writes: Writes
    me: { login: string }
    env: ModeEnv
    inputs: GitHubInputs
    log: Logger
    readPolicy: PolicyReader
    evidence: RunEvidence | undefined
  },
  req: ApprovalRequest
): Promise<boolean> {
  const { octokit, inputs, env } = at
  const repo = repositoryOf(env.event)
  const result = await decideApproval(octokit, at.me, repo, req, {
    evidence: at.evidence,
    gateContext: inputs.gateContext,
    allowSelfApproval: inputs.allowSelfApproval,
    targetUrl: runUrl(env.event),
    policyAt: (base) =>
      at.readPolicy({
        repoPath: inputs.path,
        base,
        api: contentsReader(octokit, {
          repository: `${repo.owner}/${repo.repo}`,
          refInput: INPUT.policyBase
        })
      })
  })
  // After a workflow_run, the review was read, not sent to us: no reply comment for a refusal.
  const reply = env.event.name !== 'workflow_run'
  await recordApproval(at.writes, repo, req, result, at.log, reply)
  return result.approved
}
