// The run's publishers on the runner: the job summary, the step outputs, and the artifact of the
// output folder (with its record in artifact.json). Each is independent: one failing does not
// keep the others from running.
import * as fs from 'node:fs'
import * as core from '@actions/core'
import { errorMessage } from '../../errors.js'
import { uploadOutputFolder, writeArtifactRecord } from './artifact.js'
import type { ArtifactRecord } from './artifact.js'

export const OUTPUT = {
  outcome: 'outcome',
  reportPath: 'report-path',
  diffSha256: 'diff-sha256',
  artifactName: 'artifact-name',
  artifactId: 'artifact-id',
  artifactUrl: 'artifact-url',
  tier: 'isolation-tier',
  gvisor: 'gvisor'
} as const

/** The job summary is the review comment (same renderer, already escaped and redacted). */
export async function writeJobSummary(commentFile: string): Promise<void> {
  if (!fs.existsSync(commentFile)) return
  await core.summary
    .addRaw(await fs.promises.readFile(commentFile, 'utf8'))
    .write()
    .catch((e: unknown) => core.warning(`job summary: ${errorMessage(e)}`))
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
