// `airlock cleanup --run-id ID`: what a run left behind, removed.
import { readHost } from '../host.js'
import { readRunner } from '../runner.js'
import { ConfigurationError, EXIT } from '../errors.js'
import { INPUT } from '../input-names.js'
import { runId as checkRunId } from '../inputs/values.js'
import { DockerRuntime } from '../sandbox/docker/index.js'
import { defaultTempRoot, removeRunTemps } from '../workspace/temp.js'

export async function cleanupCommand(values: Record<string, unknown>): Promise<number> {
  const raw = values[INPUT.runId]
  if (typeof raw !== 'string' || raw === '')
    throw new ConfigurationError(
      `--${INPUT.runId}`,
      'is required: the run to clean up, e.g. airlock cleanup --run-id local-20261129101500-3fa2c1 (airlock run prints it; report.json holds it)'
    )
  // Only a run id: a label value and the name part of temporary folders, never a path.
  const runId = checkRunId(raw)
  const removed = await new DockerRuntime(readHost(process.env)).cleanup(runId)
  // After the containers: nothing of the run can still write into its folders.
  const tempDirs = await removeRunTemps(
    defaultTempRoot(readRunner(process.env)),
    runId,
    readHost(process.env).toolEnv
  )
  if (values.json === true) {
    process.stdout.write(JSON.stringify({ ...removed, tempDirs }) + '\n')
  } else {
    const total = removed.containers + removed.networks + removed.volumes + tempDirs
    process.stdout.write(
      total === 0
        ? `nothing left of run ${runId}\n`
        : `removed what run ${runId} left: ${removed.containers} container(s), ${removed.networks} network(s), ${removed.volumes} volume(s), ${tempDirs} temporary folder(s)\n`
    )
  }
  return EXIT.ok
}
