import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import * as core from '@actions/core'
import { ConfigurationError, errorMessage } from './errors.js'
import { ActionLogger } from './github/logger.js'
import { defaultContext, getInputs } from './inputs.js'
import { OUTPUT_FILES, runPipeline } from './pipeline.js'
import { planRun } from './plan.js'
import { DockerSandbox, connectDocker } from './sandbox/docker.js'

/** Names shared by the main and post steps. */
export const STATE = { runId: 'airlock-run-id', tempRoot: 'airlock-temp-root' } as const
export const OUTPUT = {
  outcome: 'outcome',
  reportPath: 'report-path',
  diffSha256: 'diff-sha256'
} as const
const MODES = ['run'] as const

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
    const inputs = getInputs(readInput, defaultContext())
    const plan = planRun(inputs)
    for (const e of inputs.env) core.setSecret(e.value)
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
      { task: inputs.task.text, env: inputs.env },
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
    if (result.error !== undefined) core.setFailed(errorMessage(result.error))
  } catch (error) {
    core.setFailed(errorMessage(error))
  }
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
