// The run's publishers on the runner: the job summary, the step outputs, and the artifact of the
// output folder (with its record in artifact.json). Each is independent: one failing does not
// keep the others from running. The one table of the action's output names, and the one writer
// of the job summary.
import * as fs from 'node:fs'
import * as core from '@actions/core'
import { errorMessage } from '../../errors.js'
import { uploadOutputFolder, writeArtifactRecord } from './artifact.js'
import type { ArtifactRecord } from './artifact.js'
import type { RunEvent } from '../../event.js'
import type { Runner } from '../../runner.js'

export const OUTPUT = {
  outcome: 'outcome',
  reportPath: 'report-path',
  diffSha256: 'diff-sha256',
  artifactName: 'artifact-name',
  artifactId: 'artifact-id',
  artifactUrl: 'artifact-url',
  tier: 'isolation-tier',
  gvisor: 'gvisor',
  commentUrl: 'comment-url',
  gateState: 'gate-state',
  approved: 'approved',
  commitSha: 'commit-sha',
  pullRequestUrl: 'pull-request-url',
  runRequested: 'run-requested',
  task: 'task',
  headSha: 'head-sha',
  baseSha: 'base-sha',
  headRepository: 'head-repository',
  pullRequest: 'pull-request',
  fork: 'fork',
  evidenceRunId: 'evidence-run-id',
  evidenceArtifact: 'evidence-artifact',
  continueRunId: 'continue-run-id',
  continueArtifact: 'continue-artifact',
  continueContext: 'continue-context'
} as const

/**
 * Appends to the job summary what `build` adds to it, when the job has a summary (a failed write
 * is a warning, never the step's failure); without one, nothing is kept.
 */
export async function writeSummary(
  runner: Runner,
  build: (summary: typeof core.summary) => unknown
): Promise<void> {
  build(core.summary)
  if (!runner.stepSummary) {
    core.summary.emptyBuffer()
    return
  }
  await core.summary.write().catch((e: unknown) => core.warning(`job summary: ${errorMessage(e)}`))
}

/** The job summary is the review comment (same renderer, already escaped and redacted). */
export async function writeJobSummary(commentFile: string, runner: Runner): Promise<void> {
  if (!fs.existsSync(commentFile)) return
  const comment = await fs.promises.readFile(commentFile, 'utf8')
  await writeSummary(runner, (s) => s.addRaw(comment))
}

export function setRunOutputs(result: {
  outcome: string
  outcomeReason: string
  reportPath: string
  diffSha256: string | null
}): void {
  core.setOutput(OUTPUT.outcome, result.outcome)
  core.setOutput(OUTPUT.reportPath, result.reportPath)
  core.setOutput(OUTPUT.diffSha256, result.diffSha256 ?? '')
  core.info(`outcome: ${result.outcome} (${result.outcomeReason.replace(/::/g, ': :')})`)
}

/**
 * Uploads the output folder as the run's artifact (not in dry-run) and records the result in
 * artifact.json, so that whatever publishes the comment can say where the evidence is — or that
 * it is missing.
 */
export async function publishArtifact(
  outputDir: string,
  name: string,
  dryRun: boolean,
  event: RunEvent
): Promise<ArtifactRecord> {
  const record: ArtifactRecord = dryRun
    ? { status: 'skipped', name, reason: 'dry-run: nothing is uploaded' }
    : await core.group('artifact', () =>
        uploadOutputFolder(outputDir, { name, event, log: (m) => core.info(m) })
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
