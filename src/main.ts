import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import * as core from '@actions/core'
import { ConfigurationError, errorMessage } from './errors.js'
import { uploadOutputFolder, writeArtifactRecord } from './github/artifact.js'
import type { ArtifactRecord } from './github/artifact.js'
import { ActionLogger } from './github/logger.js'
import { defaultContext, getInputs } from './inputs.js'
import { describePolicy, policyForRun } from './policy.js'
import { OUTPUT_FILES, runPipeline } from './pipeline.js'
import { planRun } from './plan.js'
import { DockerSandbox, connectDocker } from './sandbox/docker.js'
import { applyMode, approveMode, commandMode, publishMode } from './github/modes.js'
import { bool } from './inputs.js'

/** Names shared by the main and post steps. */
export const STATE = { runId: 'airlock-run-id', tempRoot: 'airlock-temp-root' } as const
export const OUTPUT = {
  outcome: 'outcome',
  reportPath: 'report-path',
  diffSha256: 'diff-sha256',
  artifactName: 'artifact-name',
  artifactId: 'artifact-id',
  artifactUrl: 'artifact-url'
} as const
const MODES = ['run', 'publish', 'approve', 'apply', 'command'] as const

function readInput(name: string): string | undefined {
  const v = core.getInput(name)
  return v === '' ? undefined : v
}

/** The action's main step. */
export async function run(): Promise<void> {
  try {
    const mode = readInput('mode') ?? 'run'
    if (!(MODES as readonly string[]).includes(mode)) {
      throw new ConfigurationError('mode', `"${mode}" is not one of: ${MODES.join(', ')}`)
    }
    if (mode === 'publish') return await publishMode(readInput, new ActionLogger())
    if (mode === 'approve') return await approveMode(readInput, new ActionLogger())
    if (mode === 'apply') return await applyMode(readInput, new ActionLogger())
    if (mode === 'command') return await commandMode(readInput, new ActionLogger())
    const ctx = defaultContext()
    const policy = await policyForRun({
      read: readInput,
      workspace: ctx.workspace,
      env: process.env,
      readFile: (p) => fs.readFileSync(p, 'utf8'),
      token: readInput('github-token')
    })
    const inputs = getInputs(readInput, { ...ctx, policy })
    core.info(describePolicy(inputs.policy))
    const plan = planRun(inputs)
    for (const e of inputs.env) core.setSecret(e.value)
    for (const c of inputs.egress?.credentials ?? []) core.setSecret(c.secret)
    const tempRoot = process.env.RUNNER_TEMP ?? os.tmpdir()
    core.saveState(STATE.runId, plan.runId)
    core.saveState(STATE.tempRoot, tempRoot)

    const controller = new AbortController()
    const onSignal = (signal: NodeJS.Signals): void => controller.abort(signal)
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)
    const docker = connectDocker()
    const result = await runPipeline(
      plan,
      {
        task: inputs.task.text,
        env: inputs.env,
        ...(inputs.egress ? { egress: inputs.egress } : {})
      },
      {
        sandbox: new DockerSandbox(docker),
        docker,
        log: new ActionLogger(),
        signal: controller.signal,
        tempRoot
      }
    )
    // The job summary is the review comment (same renderer, already escaped and redacted).
    const comment = path.join(plan.outputDir, OUTPUT_FILES.comment)
    if (fs.existsSync(comment)) {
      await core.summary
        .addRaw(await fs.promises.readFile(comment, 'utf8'))
        .write()
        .catch((e: unknown) => core.warning(`job summary: ${errorMessage(e)}`))
    }
    core.setOutput(OUTPUT.outcome, result.report.outcome)
    core.setOutput(OUTPUT.reportPath, result.reportPath)
    core.setOutput(OUTPUT.diffSha256, result.diffSha256 ?? '')
    core.info(
      `outcome: ${result.report.outcome} (${result.report.outcomeReason.replace(/::/g, ': :')})`
    )
    const artifact = await publishArtifact(plan.outputDir, inputs.artifactName, inputs.dryRun)
    if (result.error !== undefined) core.setFailed(errorMessage(result.error))
    if (artifact.status === 'failed') {
      core.setFailed(
        `artifact ${artifact.name} was not uploaded after ${artifact.attempts} attempt(s): ${artifact.error}`
      )
    }
    // Publishing right after the run (a separate `publish` job needs no Docker and less trust).
    if (
      bool('publish', readInput('publish'), true) &&
      readInput('github-token') !== undefined &&
      process.env.GITHUB_EVENT_PATH !== undefined
    ) {
      await publishMode(readInput, new ActionLogger(), path.dirname(result.reportPath))
    }
  } catch (error) {
    core.setFailed(errorMessage(error))
  }
}

/**
 * Uploads the output folder as the run's artifact (not in dry-run) and records the result in
 * artifact.json, so that whatever publishes the comment can say where the evidence is — or that
 * it is missing.
 */
async function publishArtifact(
  outputDir: string,
  name: string,
  dryRun: boolean
): Promise<ArtifactRecord> {
  const record: ArtifactRecord = dryRun
    ? { status: 'skipped', name, reason: 'dry-run: nothing is uploaded' }
    : await core.group('artifact', () =>
        uploadOutputFolder(outputDir, { name, log: (m) => core.info(m) })
      )
  await writeArtifactRecord(outputDir, record)
  core.setOutput(OUTPUT.artifactName, name)
  if (record.status === 'uploaded') {
    core.setOutput(OUTPUT.artifactId, String(record.id))
    core.setOutput(OUTPUT.artifactUrl, record.url ?? '')
    core.info(`artifact: ${name} (id ${record.id}) ${record.url ?? ''}`)
  }
  return record
}

/** The action's post step: removes whatever a cancelled or killed run left behind. */
export async function cleanupAfterRun(): Promise<void> {
  try {
    const runId = core.getState(STATE.runId)
    if (runId === '') return
    const removed = await new DockerSandbox().cleanup(runId)
    const tempRoot = core.getState(STATE.tempRoot)
    let dirs = 0
    if (tempRoot !== '') {
      for (const name of await fs.promises.readdir(tempRoot).catch(() => [] as string[])) {
        if (name.startsWith(`airlock-${runId}-`)) {
          await fs.promises.rm(path.join(tempRoot, name), { recursive: true, force: true })
          dirs++
        }
      }
    }
    core.info(
      `cleanup: ${removed.containers} container(s), ${removed.networks} network(s), ${removed.volumes} volume(s), ${dirs} temp dir(s)`
    )
  } catch (error) {
    core.warning(`cleanup: ${errorMessage(error)}`)
  }
}
