// The action's post step (runs.post, always): removes whatever a cancelled or killed run left
// behind — its containers, networks and volumes (by the run's label) and its temporary folders.
// Bundled on its own (dist/post.js), it imports only what the cleanup needs: the HTTP cleanup
// client of the sandbox, not dockerode; never the main step.
import * as core from '@actions/core'
import { errorMessage } from './errors.js'
import { httpCleanupEngine, removeRunObjects } from './sandbox/cleanup.js'
import { STATE } from './state.js'
import { removeRunTemps } from './workspace/temp.js'

export async function cleanupAfterRun(): Promise<void> {
  try {
    const runId = core.getState(STATE.runId)
    if (runId === '') return
    const removed = await removeRunObjects(httpCleanupEngine(), runId)
    const tempRoot = core.getState(STATE.tempRoot)
    const dirs = tempRoot !== '' ? await removeRunTemps(tempRoot, runId) : 0
    core.info(
      `cleanup: ${removed.containers} container(s), ${removed.networks} network(s), ${removed.volumes} volume(s), ${dirs} temp dir(s)`
    )
  } catch (error) {
    core.warning(`cleanup: ${errorMessage(error)}`)
  }
}
