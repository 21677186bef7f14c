import { PassThrough } from 'node:stream'
import type Docker from 'dockerode'
import type { Sidecar, SidecarSpec } from '../types.js'
import { ManagedContainer } from './container.js'
import { createOptions } from './create.js'

/**
 * A sidecar: the phases' lifecycle and hardening, joined to its extra networks before start, its
 * output handed to the caller as streams. On any failure before it runs, it is removed.
 */
export async function startSidecar(
  docker: Docker,
  spec: SidecarSpec,
  timeoutMs: number
): Promise<Sidecar> {
  const container = await ManagedContainer.create(docker, createOptions(spec), timeoutMs)
  try {
    for (const n of spec.networks ?? []) {
      await docker
        .getNetwork(n.name)
        .connect({ Container: container.id, EndpointConfig: { Aliases: n.aliases } })
    }
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    await container.attach(stdout, stderr, spec.stdin === true)
    await container.start()
    return {
      stdout,
      stderr,
      exited: container.exited,
      input: (data) => container.write(data),
      async address(network) {
        const info = await container.inspect().catch(() => undefined)
        if (!info?.State.Running) return undefined
        return info.NetworkSettings.Networks[network]?.IPAddress || undefined
      },
      async stop(graceMs) {
        await container.stop(graceMs)
        await container.drain(graceMs)
        await container.remove()
      }
    }
  } catch (error) {
    await container.remove().catch(() => undefined)
    throw error
  }
}
