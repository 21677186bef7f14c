import type Docker from 'dockerode'
import { errorMessage } from '../../errors.js'
import type { ContainerSpec, PhaseResult, RunOptions } from '../types.js'
import { ManagedContainer } from './container.js'
import { createOptions } from './create.js'
import { StatsSampler, appliedSettings } from './inspect.js'

/** One phase: the shared lifecycle with the deadline, stats while it runs, settings read back. */
export async function runPhase(
  docker: Docker,
  spec: ContainerSpec,
  options: RunOptions
): Promise<PhaseResult> {
  const started = Date.now()
  const result: PhaseResult = {
    exitCode: null,
    timedOut: false,
    oomKilled: false,
    cancelled: false,
    durationMs: 0
  }
  let container: ManagedContainer
  try {
    container = await ManagedContainer.create(docker, createOptions(spec))
  } catch (error) {
    result.error = `the daemon refused the container: ${errorMessage(error)}`
    result.durationMs = Date.now() - started
    return result
  }
  const stats = new StatsSampler()
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
  } catch (error) {
    result.error = errorMessage(error)
  } finally {
    stats.stop()
    result.durationMs = Date.now() - started
    if (stats.cpuSeconds !== undefined) result.cpuSeconds = stats.cpuSeconds
    if (stats.peakMemoryBytes !== undefined) result.peakMemoryBytes = stats.peakMemoryBytes
    await container.remove()
  }
  return result
}
