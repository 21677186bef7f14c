import type Docker from 'dockerode'
import { errorMessage } from '../../errors.js'
import type { ContainerSpec, PhaseResult, RunOptions } from '../types.js'
import { ManagedContainer } from './container.js'
import { createOptions } from './create.js'
import { StatsSampler, appliedSettings } from './inspect.js'
import { engineStoppedIt, isEngineError } from '../engine-faults.js'
import { startingPhaseResult } from '../phase-result.js'

/**
 * A daemon in another container or machine (Actions Runner Controller's dind sidecar, a remote
 * DOCKER_HOST) sees its own filesystem: a bind source that exists here but not there is refused
 * as "bind source path does not exist". Says what to do about it (`dockerHost`: the host's
 * DOCKER_HOST).
 */
export function unseenBindHint(error: unknown, dockerHost: string | undefined): string {
  if (!/bind source path does not exist/i.test(errorMessage(error))) return ''
  const host = dockerHost ? ` (DOCKER_HOST=${dockerHost})` : ''
  return (
    `. The Docker daemon${host} does not see this folder at the same path: it runs in another ` +
    "container or machine. Put the run's temporary folder on a volume the daemon shares at the " +
    'same path, with RUNNER_TEMP=<a folder on that volume> (as in the runner work volume of ' +
    'Actions Runner Controller, see docs/runner-scale-sets.md)'
  )
}

/** One phase: the shared lifecycle with the deadline, stats while it runs, settings read back. */
export async function runPhase(
  docker: Docker,
  spec: ContainerSpec,
  options: RunOptions,
  dockerHost: string | undefined
): Promise<PhaseResult> {
  const started = Date.now()
  const result = startingPhaseResult()
  let container: ManagedContainer
  try {
    container = await ManagedContainer.create(docker, createOptions(spec))
  } catch (error) {
    result.error = `the daemon refused the container: ${errorMessage(error)}${unseenBindHint(error, dockerHost)}`
    if (isEngineError(error)) result.engineFault = true
    result.durationMs = Date.now() - started
    return result
  }
  const stats = new StatsSampler()
  const since = Math.floor(started / 1000) - 1
  // Asked once (after the verdicts, or in the end whatever happened). A container the engine did
  // not remove is an engine fault; the run's cleanup retries it.
  let removed: Promise<void> | undefined
  const removal = (): Promise<void> =>
    (removed ??= container.remove().catch((e: unknown) => {
      result.error ??= errorMessage(e)
    }))
  try {
    await container.attach(options.stdout, options.stderr)
    await container.start()
    stats.start(container.container)
    const outcome = await container.waitUntil(options.timeoutMs, options.signal)
    if (outcome !== 'exited') {
      result.timedOut = outcome === 'timeout'
      result.cancelled = outcome === 'cancelled'
      await container.stop(options.graceMs)
    }
    if (outcome === 'exited') {
      const exit = await container.exited
      if (exit.error !== undefined)
        throw new Error(`lost the container while waiting for it: ${exit.error}`)
    }
    await container.drain()
    const info = await container.inspect()
    result.exitCode = info.State.ExitCode
    result.oomKilled = info.State.OOMKilled
    result.applied = appliedSettings(info)
    // An exit by SIGTERM/SIGKILL nobody here sent: the engine stopped it (a daemon restart).
    if (
      (result.exitCode === 137 || result.exitCode === 143) &&
      engineStoppedIt(result.exitCode, await container.events(since), container.killsSent)
    ) {
      throw new Error(
        `the engine stopped the container (exit ${result.exitCode}, a signal this run did not send: a daemon restart or stop)`
      )
    }
    await container.watched
    if (container.probeFault !== undefined)
      throw new Error(`the engine failed a question about the container: ${container.probeFault}`)
    if (container.streamError !== undefined)
      throw new Error(`the engine cut the output stream: ${container.streamError}`)
    // The engine ends the statistics stream when it removes the container; until then a stream
    // that has not spoken yet waits for the engine's next sample (up to a second after the
    // exit). Removed first, then the stream's verdict: a fault of the stream is still seen.
    await removal()
    const statsFailure = await stats.settled()
    if (statsFailure !== undefined)
      throw new Error(`the engine failed the statistics stream: ${statsFailure}`)
  } catch (error) {
    result.error = errorMessage(error)
    // Every failure after the create is the engine's (the container's own exit is not an error).
    result.engineFault = true
  } finally {
    stats.stop()
    result.durationMs = Date.now() - started
    if (stats.cpuSeconds !== undefined) result.cpuSeconds = stats.cpuSeconds
    if (stats.peakMemoryBytes !== undefined) result.peakMemoryBytes = stats.peakMemoryBytes
    await removal()
  }
  return result
}
