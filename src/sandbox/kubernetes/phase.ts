// One phase on the cluster: its pod created, the folders copied in, its output followed until it
// exits, times out, is cancelled or fails, the writable folders read back, and the outcome mapped
// to the phase's result as the Docker backend reports it.
import { ConfigurationError, errorMessage } from '../../errors.js'
import type { ContainerSpec, PhaseResult, RunOptions, SidecarSpec } from '../types.js'
import { startingPhaseResult } from '../phase-result.js'
import { runOf } from './api-calls.js'
import { describe } from './pod-lifecycle.js'
import type { Pod } from './pod-lifecycle.js'

/** How the runtime makes the pods of a run: the run's deny-all policy first, then the pod. */
export interface PodMaker {
  guard(runId: string, labels: Record<string, string>): Promise<void>
  createPod(
    spec: ContainerSpec | SidecarSpec,
    deadlineSeconds: number,
    graceSeconds: number
  ): Promise<Pod>
}

/** One phase as a pod (the runtime's runPhase). */
export async function runPhase(
  pods: PodMaker,
  spec: ContainerSpec,
  options: RunOptions
): Promise<PhaseResult> {
  const graceSeconds = Math.max(1, Math.ceil(options.graceMs / 1000))
  const started = Date.now()
  const result = startingPhaseResult()
  let pod: Pod | undefined
  try {
    const runId = runOf(spec.labels)
    await pods.guard(runId, spec.labels)
    pod = await pods.createPod(
      spec,
      Math.ceil(options.timeoutMs / 1000) + graceSeconds,
      graceSeconds
    )
    const running = pod
    const startedState = await running.copyIn(options.signal)
    if (startedState.kind === 'failed' || startedState.kind === 'gone') {
      return fail(result, started, describe(startedState), true)
    }
    // The output of the phase's container from its start (stdout and stderr as one stream).
    const logs = running.logs(options.stdout)
    let timer: NodeJS.Timeout | undefined
    const deadline = new AbortController()
    timer = setTimeout(() => deadline.abort(), options.timeoutMs)
    const stop = AbortSignal.any([deadline.signal, ...(options.signal ? [options.signal] : [])])
    const end = await running.follow((s) => s.kind === 'exited' || s.kind === 'failed', stop)
    clearTimeout(timer)
    timer = undefined
    if (end.kind === 'exited') {
      await logs
      result.exitCode = end.exitCode
      result.oomKilled = end.reason === 'OOMKilled'
      if (spec.mounts.some((m) => !m.readOnly)) await running.readBack()
    } else if (end.kind === 'failed' && end.reason === 'DeadlineExceeded') {
      result.timedOut = true
      // As with Docker, a timeout is not an error of the engine. The writable folders are not
      // read back (the pod is gone): the host keeps what they held before the phase.
    } else if (end.kind === 'failed' && end.reason === 'Evicted') {
      result.error = `the cluster evicted the pod: ${end.message}`
    } else if (end.kind === 'failed' || end.kind === 'gone') {
      return fail(result, started, describe(end), true)
    } else {
      // Our deadline or a cancellation: the pod is deleted with the grace period (TERM, KILL).
      result.timedOut = deadline.signal.aborted
      result.cancelled = !result.timedOut
      await running.remove(graceSeconds)
      const after = await running.lastState()
      if (after.kind === 'exited') {
        result.exitCode = after.exitCode
        result.oomKilled = after.reason === 'OOMKilled'
      }
    }
  } catch (error) {
    result.error = errorMessage(error)
    result.engineFault = !(error instanceof ConfigurationError)
  } finally {
    await pod?.remove(0).catch((e: unknown) => {
      result.error ??= `the pod was not removed: ${errorMessage(e)}`
    })
    result.durationMs = Date.now() - started
  }
  return result
}

function fail(
  result: PhaseResult,
  started: number,
  error: string,
  engineFault: boolean
): PhaseResult {
  result.error = error
  result.engineFault = engineFault
  result.durationMs = Date.now() - started
  return result
}
