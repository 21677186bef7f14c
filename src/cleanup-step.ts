// The action's post step (runs.post, always): removes whatever a cancelled or killed run left
// behind — its containers, networks and volumes (by the run's label) and its temporary folders —
// and completes a progress check run a cancelled progress job left in progress.
// Bundled on its own (dist/post.js), it imports only what the cleanup needs: the HTTP cleanup
// client of the sandbox, not dockerode; never the main step.
import * as fs from 'node:fs'
import * as core from '@actions/core'
import { errorMessage } from './errors.js'
import { readHost } from './host.js'
import { httpCleanupEngine, removeRunObjects } from './sandbox/cleanup.js'
import { engineEndpoint } from './sandbox/engine-http.js'
import { STATE } from './state.js'
import { deleteRunObjects, inClusterEndpoint } from './sandbox/kubernetes/post-cleanup.js'
import { removeRunTemps } from './workspace/temp.js'

/**
 * Completes the progress check run at `url` (its API address, saved by the progress step) as
 * cancelled: the progress job was cancelled with its run, so the check would otherwise say "in
 * progress" forever. Plain fetch, so the post step bundles no API client.
 */
export async function completeProgressCheck(url: string, token: string): Promise<void> {
  const res = await fetch(url, {
    method: 'PATCH',
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'application/vnd.github+json',
      'content-type': 'application/json'
    },
    body: JSON.stringify({
      status: 'completed',
      conclusion: 'cancelled',
      completed_at: new Date().toISOString(),
      output: {
        title: 'Cancelled',
        summary: 'The run was cancelled before the agent job ended: no review follows from it.'
      }
    })
  })
  if (!res.ok) throw new Error(`completing the progress check run: HTTP ${res.status}`)
}

export async function cleanupAfterRun(): Promise<void> {
  const progress = core.getState(STATE.progressCheckRun)
  if (progress !== '') {
    try {
      await completeProgressCheck(progress, core.getInput('github-token'))
      core.info('cleanup: the progress check run, left in progress by a cancelled job, completed')
    } catch (error) {
      core.warning(`cleanup: ${errorMessage(error)}`)
    }
  }
  try {
    const runId = core.getState(STATE.runId)
    if (runId === '') return
    let objects: string
    if (core.getState(STATE.engine) === 'kubernetes') {
      objects = await kubernetesCleanup(runId, core.getState(STATE.kubeNamespace))
    } else {
      const host = readHost(process.env)
      const removed = await removeRunObjects(
        httpCleanupEngine(engineEndpoint(host.docker), host.engineTimeoutMs),
        runId,
        host.engineTimeoutMs
      )
      objects = `${removed.containers} container(s), ${removed.networks} network(s), ${removed.volumes} volume(s)`
    }
    const tempRoot = core.getState(STATE.tempRoot)
    const dirs =
      tempRoot !== '' ? await removeRunTemps(tempRoot, runId, readHost(process.env).toolEnv) : 0
    core.info(`cleanup: ${objects}, ${dirs} temp dir(s)`)
  } catch (error) {
    core.warning(`cleanup: ${errorMessage(error)}`)
  }
}

/**
 * A run on the Kubernetes backend: its pods, services and policies deleted with the pod's own
 * service account (the runner of Actions Runner Controller's kubernetes mode is a pod). Elsewhere
 * it says what to run instead.
 */
async function kubernetesCleanup(runId: string, namespace: string): Promise<string> {
  const ep = inClusterEndpoint(process.env)
  if (ep === undefined) {
    core.warning(
      `cleanup: the run used engine kubernetes from outside a cluster; delete what it left with: kubectl delete pods,services,networkpolicies -l dev.airlock.run-id=${runId}`
    )
    return 'no Kubernetes object (not in a cluster)'
  }
  const ns =
    namespace !== ''
      ? namespace
      : fs.readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/namespace', 'utf8').trim()
  const removed = await deleteRunObjects(ep, ns, runId)
  return `${removed.pods} pod(s), ${removed.services} service(s), ${removed.networkpolicies} network policy(ies) in namespace ${ns}`
}
