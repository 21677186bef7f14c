import * as fs from 'node:fs'
import * as path from 'node:path'
import * as core from '@actions/core'
import { ConfigurationError } from '../../errors.js'
import type { InputReader } from '../../input-read.js'
import { INPUT } from '../../input-names.js'
import type { Logger } from '../../log.js'
import { codeBlock } from '../../report/escape.js'
import { applyRun } from '../apply/apply.js'
import { readArtifactRecord } from '../client/artifact.js'
import { artifactLine } from '../client/artifact-line.js'
import { approvalFromFinishedRun, approvalRequest } from '../gate/approval-request.js'
import type { ApprovalRequest } from '../gate/approval-request.js'
import { decideApproval, evidenceLocation, latestReport, recordApproval } from '../gate/approve.js'
import {
  acknowledgeCommand,
  decideCommand,
  dispatchCommand,
  runCommand
} from '../conversation/command.js'
import { findEarlierRun } from '../conversation/follow-up.js'
import { formatContinueContext } from '../../continue-context.js'
import { InvalidEvidenceError } from '../../report/evidence-folder.js'
import { finishedRun, openPullsAt } from '../client/pulls.js'
import { createClient } from '../client/client.js'
import { contentsReader } from '../client/contents.js'
import type { FileReader } from '../client/contents.js'
import type { EventContext, GitHubInputs, ModeEnv } from '../client/context.js'
import { GITHUB_OUTPUT, eventPullNumber, eventContext, getGitHubInputs } from '../client/context.js'
import { readEvidence } from '../../report/evidence-folder.js'
import type { RunEvidence } from '../../report/evidence-folder.js'
import { DRY_RUN_FILE } from '../../report/provenance.js'
import { requireMatchingStatement } from '../../report/provenance-verify.js'
import { publishRun } from '../review/publish.js'
import { Writes, resolveIdentity } from '../client/writes.js'
import type { WriteCall } from '../client/writes.js'

function runUrl(ctx: EventContext): string | undefined {
  const id = ctx.runId
  return id === undefined
    ? undefined
    : `${ctx.serverUrl}/${ctx.owner}/${ctx.repo}/actions/runs/${id}`
}

function setup(
  inputs: GitHubInputs,
  log: Logger
): { octokit: ReturnType<typeof createClient>; writes: Writes } {
  const octokit = createClient({ token: inputs.token, log, readOnly: inputs.dryRun })
  return { octokit, writes: new Writes(octokit, inputs.dryRun) }
}

/** The dry run's record: every write with its exact payload, in the output folder and the summary. */
async function reportDryRun(
  outputDir: string,
  mode: string,
  calls: WriteCall[],
  extra: Record<string, unknown> = {}
): Promise<void> {
  await fs.promises.mkdir(outputDir, { recursive: true })
  const record = { mode, dryRun: true, writes: calls, ...extra }
  await fs.promises.writeFile(
    path.join(outputDir, DRY_RUN_FILE),
    JSON.stringify(record, null, 2) + '\n'
  )
  const summary = core.summary.addHeading(`Agent Airlock ${mode}: dry run (nothing was sent)`, 3)
  if (calls.length === 0) summary.addRaw('No write would be made.\n\n')
  for (const c of calls) {
    const { body, ...rest } = c.params
    summary.addRaw(`**${c.route}**\n\n${codeBlock(JSON.stringify(rest, null, 2), 'json')}\n\n`)
    if (typeof body === 'string') {
      summary.addRaw(`<details><summary>body</summary>\n\n${body}\n\n</details>\n\n`)
    }
  }
  if (process.env.GITHUB_STEP_SUMMARY) await summary.write()
  else summary.emptyBuffer()
}

/**
 * `publish` mode (and `run` with publishing): the review comment and the gate status, rendered
 * from the folder's report.json and diff.patch (never its comment.md). On `workflow_run` (the
 * publisher of fork pull requests) the pull requests are found by the finished run's head
 * repository and head commit, and the report must be for that commit.
 */
export async function publishMode(
  read: InputReader,
  log: Logger,
  env: ModeEnv,
  outputDirOverride?: string
): Promise<void> {
  const inputs = getGitHubInputs(read, env.workspace, { tokenRequired: true })
  const outputDir = outputDirOverride ?? inputs.outputDir
  const ctx = eventContext(env.event)
  const evidence = readEvidence(outputDir)
  const evidenceLine = artifactLine(await readArtifactRecord(outputDir), runUrl(ctx))
  const { octokit, writes } = setup(inputs, log)
  let pulls: number[]
  const run = finishedRun(ctx)
  let targetUrl = runUrl(ctx)
  if (inputs.pullRequest === undefined && run !== null) {
    if (evidence.report.headSha !== run.headSha) {
      throw new InvalidEvidenceError(
        `the report is for ${evidence.report.headSha.slice(0, 12)}, but the finished run ${run.id} ran on ${run.headSha.slice(0, 12)}`
      )
    }
    pulls = await openPullsAt(octokit, ctx.owner, ctx.repo, run.headSha, run.headRepository)
    targetUrl = `${ctx.serverUrl}/${ctx.owner}/${ctx.repo}/actions/runs/${run.id}`
  } else {
    const n = eventPullNumber(ctx, inputs.pullRequest)
    pulls = n === undefined ? [] : [n]
  }
  if (pulls.length === 0) {
    log.warn(
      run !== null
        ? `publish: no open pull request has head ${run.headSha.slice(0, 12)} from ${run.headRepository}; nothing published`
        : `publish: the ${ctx.eventName || 'current'} event has no pull request (set pull-request); nothing published`
    )
    return
  }
  const me = await resolveIdentity(octokit, inputs.appSlug)
  for (const pullNumber of pulls) {
    const result = await publishRun(
      octokit,
      writes,
      me,
      { owner: ctx.owner, repo: ctx.repo, pullNumber, targetUrl },
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
    core.setOutput(GITHUB_OUTPUT.commentUrl, result.reviewUrl ?? '')
    core.setOutput(GITHUB_OUTPUT.gateState, result.status?.state ?? '')
    log.info(
      `published review ${result.reviewId} on #${pullNumber}; gate ${result.status?.state}: ${result.status?.description}`
    )
  }
  if (inputs.dryRun) {
    await reportDryRun(outputDir, 'publish', writes.calls)
    log.info(
      `dry run: ${writes.calls.length} write(s) recorded in ${path.join(outputDir, DRY_RUN_FILE)}`
    )
  }
}

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
 * Whether the run's evidence was downloaded for this step: `output-dir` is a folder. The runner
 * hands every mode the input's default (`airlock-out`) whether the workflow set it or not, so
 * the value alone says nothing; the folder a download step made does. A path that exists but is
 * not a folder is a mistake, named.
 */
function evidenceDownloaded(outputDir: string): boolean {
  let st: fs.Stats
  try {
    st = fs.lstatSync(outputDir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
  if (!st.isDirectory())
    throw new ConfigurationError(
      INPUT.outputDir,
      `${outputDir} is not a folder; point output-dir at the folder the run's artifact was downloaded into`
    )
  return true
}

/**
 * The evidence approve is handed: when the approval job downloaded the run's artifact into
 * `output-dir` (the folder exists), every file must match provenance.json (EvidenceMismatchError
 * otherwise), then report.json and diff.patch are checked as publish checks them. When no
 * evidence was downloaded, approve decides on the action's own review and status alone.
 */
function approvalEvidence(outputDir: string): RunEvidence | undefined {
  if (!evidenceDownloaded(outputDir)) return undefined
  requireMatchingStatement(outputDir)
  return readEvidence(outputDir)
}

/** `approve` mode. */
export async function approveMode(
  read: InputReader,
  log: Logger,
  env: ModeEnv,
  readPolicy: PolicyReader
): Promise<void> {
  const inputs = getGitHubInputs(read, env.workspace, { tokenRequired: true })
  const ctx = eventContext(env.event)
  const direct = approvalRequest(ctx)
  if (direct === null && ctx.eventName !== 'workflow_run') {
    log.info(`approve: this ${ctx.eventName || 'event'} is not an approval; nothing to do`)
    core.setOutput(GITHUB_OUTPUT.approved, 'false')
    return
  }
  // Evidence handed to approve (the run's artifact, output-dir) must match its provenance
  // statement before anything is read or written; it must then be the latest report's.
  const evidence = approvalEvidence(inputs.outputDir)
  const { octokit, writes } = setup(inputs, log)
  const me = await resolveIdentity(octokit, inputs.appSlug)
  const requests: ApprovalRequest[] =
    direct !== null ? [direct] : await approvalFromFinishedRun(octokit, me, ctx)
  if (requests.length === 0) {
    log.info(`approve: this ${ctx.eventName || 'event'} is not an approval; nothing to do`)
    core.setOutput(GITHUB_OUTPUT.approved, 'false')
    return
  }
  let approved = false
  for (const req of requests) {
    approved =
      (await decideAndRecord(octokit, writes, me, ctx, req, inputs, log, readPolicy, evidence)) ||
      approved
  }
  core.setOutput(GITHUB_OUTPUT.approved, String(approved))
  if (inputs.dryRun) await reportDryRun(inputs.outputDir, 'approve', writes.calls)
}

async function decideAndRecord(
  octokit: ReturnType<typeof createClient>,
  writes: Writes,
  me: { login: string },
  ctx: EventContext,
  req: ApprovalRequest,
  inputs: GitHubInputs,
  log: Logger,
  readPolicy: PolicyReader,
  evidence: RunEvidence | undefined
): Promise<boolean> {
  const result = await decideApproval(octokit, me, ctx, req, {
    evidence,
    gateContext: inputs.gateContext,
    allowSelfApproval: inputs.allowSelfApproval,
    targetUrl: runUrl(ctx),
    policyAt: (base) =>
      readPolicy({
        repoPath: inputs.path,
        base,
        api: contentsReader(octokit, {
          repository: `${ctx.owner}/${ctx.repo}`,
          refInput: INPUT.policyBase
        })
      })
  })
  // After a workflow_run, the review was read, not sent to us: no reply comment for a refusal.
  await recordApproval(writes, ctx, req, result, log, ctx.eventName !== 'workflow_run')
  return result.approved
}

/**
 * `locate` mode, the step before the approval job downloads the evidence: for the approval this
 * event carries (a comment, a review, or the review relay's finished run), finds the action's own
 * latest report on its pull request and outputs where that report's evidence is:
 * `evidence-run-id` (the run whose artifact holds it) and `evidence-artifact` (its name). Both
 * are empty when the event is no approval or the pull request has no report (approve then
 * refuses with the reason). It writes nothing.
 */
export async function locateMode(read: InputReader, log: Logger, env: ModeEnv): Promise<void> {
  const inputs = getGitHubInputs(read, env.workspace, { tokenRequired: true })
  const ctx = eventContext(env.event)
  core.setOutput(GITHUB_OUTPUT.evidenceRunId, '')
  core.setOutput(GITHUB_OUTPUT.evidenceArtifact, '')
  const direct = approvalRequest(ctx)
  if (direct === null && ctx.eventName !== 'workflow_run') {
    log.info(`locate: this ${ctx.eventName || 'event'} is not an approval; nothing to download`)
    return
  }
  const octokit = createClient({ token: inputs.token, log, readOnly: true })
  const me = await resolveIdentity(octokit, inputs.appSlug)
  const requests = direct !== null ? [direct] : await approvalFromFinishedRun(octokit, me, ctx)
  const req = requests[0]
  if (req === undefined) {
    log.info('locate: no approval to check; nothing to download')
    return
  }
  const report = await latestReport(
    octokit,
    { owner: ctx.owner, repo: ctx.repo },
    req.pullNumber,
    me
  )
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
  core.setOutput(GITHUB_OUTPUT.evidenceRunId, where.runId)
  core.setOutput(GITHUB_OUTPUT.evidenceArtifact, where.artifact)
  log.info(
    `locate: the latest report on #${req.pullNumber} is run ${report.marker.runId}; its evidence is the artifact ${where.artifact} of run ${where.runId}`
  )
}

/** `apply` mode. */
export async function applyMode(read: InputReader, log: Logger, env: ModeEnv): Promise<void> {
  const inputs = getGitHubInputs(read, env.workspace, { tokenRequired: true })
  const ctx = eventContext(env.event)
  // Only evidence that matches its provenance statement is applied (a changed byte refuses).
  if (!evidenceDownloaded(inputs.outputDir))
    throw new ConfigurationError(
      INPUT.outputDir,
      `${inputs.outputDir} does not exist; download the run's artifact into output-dir before apply`
    )
  requireMatchingStatement(inputs.outputDir)
  const evidence = readEvidence(inputs.outputDir)
  const { octokit, writes } = setup(inputs, log)
  const me = await resolveIdentity(octokit, inputs.appSlug)
  const result = await applyRun(
    octokit,
    writes,
    ctx,
    evidence,
    {
      repoPath: inputs.path,
      gateContext: inputs.gateContext,
      branch: inputs.branch,
      base: inputs.base,
      tempRoot: env.runnerTemp
    },
    log,
    inputs.pullRequest,
    me
  )
  if (inputs.dryRun) {
    await reportDryRun(inputs.outputDir, 'apply', writes.calls, { result })
    return
  }
  core.setOutput(GITHUB_OUTPUT.commitSha, result.commitSha)
  if (result.pullRequestUrl) core.setOutput(GITHUB_OUTPUT.pullRequestUrl, result.pullRequestUrl)
  log.info(`committed ${result.commitSha} on ${result.branch}`)
}

/**
 * `command` mode: reads `/airlock run <task>` from an issue_comment event, checks who asked and
 * the pull request, acknowledges with a reaction (or a reaction and the reason), and sets outputs
 * for the job that runs the agent: `run-requested`, `task`, `head-sha`, `head-repository`,
 * `base-sha` (for `policy-base`), `pull-request`, `fork`, and for a follow-up (the pull request
 * has an earlier run: the action's own latest review) `continue-run-id`, `continue-artifact` and
 * `continue-context`. It starts nothing itself and runs nothing from the comment.
 */
export async function commandMode(read: InputReader, log: Logger, env: ModeEnv): Promise<void> {
  const inputs = getGitHubInputs(read, env.workspace, { tokenRequired: true })
  const ctx = eventContext(env.event)
  core.setOutput(GITHUB_OUTPUT.runRequested, 'false')
  const cmd = runCommand(ctx) ?? dispatchCommand(ctx, inputs.pullRequest, read(INPUT.task))
  if (cmd === null) {
    log.info(
      `command: this ${ctx.eventName || 'event'} is neither an /airlock run comment (or a reply in a review thread) nor a manual run with pull-request`
    )
    return
  }
  const { octokit, writes } = setup(inputs, log)
  const decision = await decideCommand(octokit, ctx, cmd)
  // A follow-up continues the pull request's last Airlock run (the action's own latest review).
  const followUp = decision.accepted
    ? await findEarlierRun(
        octokit,
        { owner: ctx.owner, repo: ctx.repo },
        cmd.pullNumber,
        await resolveIdentity(octokit, inputs.appSlug),
        ctx.serverUrl,
        {
          ...(cmd.commentId !== undefined ? { commentId: cmd.commentId } : {}),
          ...(cmd.threadId !== undefined ? { threadId: cmd.threadId } : {})
        }
      )
    : null
  await acknowledgeCommand(writes, ctx, cmd, decision, log, runUrl(ctx), followUp?.context.runId)
  if (inputs.dryRun)
    await reportDryRun(inputs.outputDir, 'command', writes.calls, { decision, followUp })
  core.setOutput(GITHUB_OUTPUT.continueRunId, followUp?.runId ?? '')
  core.setOutput(GITHUB_OUTPUT.continueArtifact, followUp?.artifact ?? '')
  core.setOutput(
    GITHUB_OUTPUT.continueContext,
    followUp ? formatContinueContext(followUp.context) : ''
  )
  if (!decision.accepted) return
  if (followUp !== null)
    log.info(
      `continues run ${followUp.context.runId} (artifact ${followUp.artifact} of run ${followUp.runId}) with ${followUp.context.comments.length} review comment(s)`
    )
  core.setOutput(GITHUB_OUTPUT.runRequested, 'true')
  core.setOutput(GITHUB_OUTPUT.task, decision.task)
  core.setOutput(GITHUB_OUTPUT.headSha, decision.headSha)
  core.setOutput(GITHUB_OUTPUT.baseSha, decision.baseSha)
  core.setOutput(GITHUB_OUTPUT.headRepository, decision.headRepository)
  core.setOutput(GITHUB_OUTPUT.pullRequest, String(cmd.pullNumber))
  core.setOutput(GITHUB_OUTPUT.fork, String(decision.fork))
}
