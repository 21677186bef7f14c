import * as fs from 'node:fs'
import * as path from 'node:path'
import * as core from '@actions/core'
import type { InputReader } from '../input-read.js'
import { INPUT } from '../input-names.js'
import type { Logger } from '../log.js'
import { codeBlock } from '../report/escape.js'
import { applyRun } from './apply.js'
import { readArtifactRecord } from './artifact.js'
import { artifactLine } from './artifact-line.js'
import { approvalRequest, decideApproval, recordApproval } from './approve.js'
import { createClient } from './client.js'
import { contentsReader } from './contents.js'
import type { FileReader } from './contents.js'
import type { EventContext, GitHubInputs } from './context.js'
import { GITHUB_OUTPUT, eventPullNumber, getGitHubInputs, readEventContext } from './context.js'
import { readEvidence } from './evidence.js'
import { publishRun } from './publish.js'
import { Writes, resolveIdentity } from './writes.js'
import type { WriteCall } from './writes.js'

export const DRY_RUN_FILE = 'dry-run.json'

function workspace(): string {
  return process.env.GITHUB_WORKSPACE ?? process.cwd()
}

function runUrl(ctx: EventContext): string | undefined {
  const id = process.env.GITHUB_RUN_ID
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

/** `publish` mode (and `run` with publishing): the review comment and the gate status. */
export async function publishMode(
  read: InputReader,
  log: Logger,
  outputDirOverride?: string
): Promise<void> {
  const inputs = getGitHubInputs(read, workspace(), { tokenRequired: true })
  const outputDir = outputDirOverride ?? inputs.outputDir
  const ctx = readEventContext()
  const pullNumber = eventPullNumber(ctx, inputs.pullRequest)
  const evidence = readEvidence(outputDir)
  const where = artifactLine(await readArtifactRecord(outputDir), runUrl(ctx))
  if (where !== null) evidence.comment = `${evidence.comment.trimEnd()}\n\n${where}\n`
  if (pullNumber === undefined) {
    log.warn(
      `publish: the ${ctx.eventName || 'current'} event has no pull request (set pull-request); nothing published`
    )
    return
  }
  const { octokit, writes } = setup(inputs, log)
  const me = await resolveIdentity(octokit)
  const result = await publishRun(
    octokit,
    writes,
    me,
    { owner: ctx.owner, repo: ctx.repo, pullNumber, targetUrl: runUrl(ctx) },
    evidence,
    { gateContext: inputs.gateContext, failOutcomes: inputs.failOutcomes },
    log
  )
  if (result.skipped !== undefined) {
    log.warn(`publish: ${result.skipped}`)
    return
  }
  if (inputs.dryRun) {
    await reportDryRun(outputDir, 'publish', writes.calls, { status: result.status })
    log.info(
      `dry run: ${writes.calls.length} write(s) recorded in ${path.join(outputDir, DRY_RUN_FILE)}`
    )
    return
  }
  core.setOutput(GITHUB_OUTPUT.commentUrl, result.reviewUrl ?? '')
  core.setOutput(GITHUB_OUTPUT.gateState, result.status?.state ?? '')
  log.info(
    `published review ${result.reviewId}; gate ${result.status?.state}: ${result.status?.description}`
  )
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

/** `approve` mode. */
export async function approveMode(
  read: InputReader,
  log: Logger,
  readPolicy: PolicyReader
): Promise<void> {
  const inputs = getGitHubInputs(read, workspace(), { tokenRequired: true })
  const ctx = readEventContext()
  const req = approvalRequest(ctx)
  if (req === null) {
    log.info(`approve: this ${ctx.eventName || 'event'} is not an approval; nothing to do`)
    core.setOutput(GITHUB_OUTPUT.approved, 'false')
    return
  }
  const { octokit, writes } = setup(inputs, log)
  const me = await resolveIdentity(octokit)
  const result = await decideApproval(octokit, me, ctx, req, {
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
  await recordApproval(writes, ctx, req, result, log)
  core.setOutput(GITHUB_OUTPUT.approved, String(result.approved))
  if (inputs.dryRun) await reportDryRun(inputs.outputDir, 'approve', writes.calls, { result })
}

/** `apply` mode. */
export async function applyMode(read: InputReader, log: Logger): Promise<void> {
  const inputs = getGitHubInputs(read, workspace(), { tokenRequired: true })
  const ctx = readEventContext()
  const evidence = readEvidence(inputs.outputDir)
  const { octokit, writes } = setup(inputs, log)
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
      tempRoot: process.env.RUNNER_TEMP
    },
    log,
    inputs.pullRequest
  )
  if (inputs.dryRun) {
    await reportDryRun(inputs.outputDir, 'apply', writes.calls, { result })
    return
  }
  core.setOutput(GITHUB_OUTPUT.commitSha, result.commitSha)
  if (result.pullRequestUrl) core.setOutput(GITHUB_OUTPUT.pullRequestUrl, result.pullRequestUrl)
  log.info(`committed ${result.commitSha} on ${result.branch}`)
}
