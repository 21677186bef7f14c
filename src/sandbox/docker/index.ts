// The Docker backend of the runtime boundary: the only code that imports dockerode.
import Docker from 'dockerode'
import { ConfigurationError, InfrastructureError, errorMessage } from '../../errors.js'
import { LABELS } from '../../plan.js'
import type { ImagePlan } from '../../plan.js'
import type {
  BaseProvided,
  ContainerSpec,
  EngineFacts,
  ImageBase,
  ImageInfo,
  ImageLog,
  LoadedImage,
  Network,
  NetworkSpec,
  PhaseResult,
  RunOptions,
  Runtime,
  Sidecar,
  SidecarSpec
} from '../types.js'
import {
  EngineFault,
  engineTimeoutMs,
  isEngineError,
  retryWhileAway,
  withDeadline
} from '../engine-faults.js'
import { resolveImage } from './image.js'
import { imageBuildKey, imageInputsKey, loadImage, provideBase, saveImage } from './image-cache.js'
import { engineFacts } from './inspect.js'
import { runPhase } from './phase.js'
import { startSidecar } from './sidecar.js'

export function dockerUnreachable(error: unknown): InfrastructureError {
  return new InfrastructureError(
    `the Docker engine is not reachable (${errorMessage(error)}); start Docker, or point DOCKER_HOST at a running engine (the README's "Command line" section, and docs/setup.md, say what a run needs)`,
    { cause: error }
  )
}

export class DockerRuntime implements Runtime {
  /** Connects to the daemon named by DOCKER_HOST, or the default socket. */
  constructor(private readonly docker: Docker = new Docker()) {}

  async preflight(runtime: string): Promise<void> {
    let info: { Runtimes?: Record<string, unknown> }
    try {
      info = (await withDeadline(this.docker.info(), engineTimeoutMs(), 'info')) as {
        Runtimes?: Record<string, unknown>
      }
    } catch (error) {
      throw dockerUnreachable(error)
    }
    const runtimes = Object.keys(info.Runtimes ?? {})
    if (!runtimes.includes(runtime)) {
      throw new ConfigurationError(
        'runtime',
        `"${runtime}" is not configured in the Docker daemon (it has: ${runtimes.join(', ')}); choose one of those or add it under "runtimes" in /etc/docker/daemon.json`
      )
    }
  }

  /**
   * Unknown facts are null; a fault of the engine itself (connection lost, 5xx, no answer in
   * time) throws an EngineFault: the run cannot vouch for an engine that failed mid-run.
   */
  async engineFacts(): Promise<EngineFacts> {
    const version = await withDeadline(this.docker.version(), engineTimeoutMs(), 'version').catch(
      (error: unknown) => {
        if (isEngineError(error)) throw error
        return undefined
      }
    )
    return engineFacts(version)
  }

  resolveImage(
    plan: ImagePlan,
    log: ImageLog,
    options: { holder?: string; signal?: AbortSignal } = {}
  ): Promise<ImageInfo> {
    return resolveImage(this.docker, plan, log, options)
  }

  imageInputsKey(plan: ImagePlan): Promise<string | undefined> {
    return imageInputsKey(plan)
  }

  imageBuildKey(id: string): Promise<string | undefined> {
    return imageBuildKey(this.docker, id)
  }

  saveImage(
    id: string,
    plan: ImagePlan,
    file: string
  ): Promise<{ buildKey: string; bases: ImageBase[] }> {
    return saveImage(this.docker, id, plan, file)
  }

  provideBase(base: ImageBase): Promise<BaseProvided> {
    return provideBase(this.docker, base)
  }

  loadImage(file: string, expect: { id: string; buildKey: string }): Promise<LoadedImage> {
    return loadImage(this.docker, file, expect)
  }

  runPhase(spec: ContainerSpec, options: RunOptions): Promise<PhaseResult> {
    return runPhase(this.docker, spec, options)
  }

  async createNetwork(spec: NetworkSpec): Promise<Network> {
    const network = await this.docker.createNetwork({
      Name: spec.name,
      Driver: 'bridge',
      Internal: spec.internal,
      CheckDuplicate: true,
      // No address for the bridge on the host: an internal bridge with an address lets every
      // container on it reach the host's listeners (and through them, the rest of the host).
      ...(spec.internal
        ? {
            Options: {
              'com.docker.network.bridge.inhibit_ipv4': 'true',
              'com.docker.network.bridge.enable_icc': 'true'
            }
          }
        : {}),
      Labels: spec.labels
    })
    return { name: spec.name, remove: () => network.remove().then(() => undefined) }
  }

  async ociRuntimes(): Promise<Record<string, { runtimeArgs: string[] }>> {
    let info: { Runtimes?: Record<string, { runtimeArgs?: unknown }> }
    try {
      info = (await this.docker.info()) as typeof info
    } catch (error) {
      throw dockerUnreachable(error)
    }
    const out: Record<string, { runtimeArgs: string[] }> = {}
    for (const [name, r] of Object.entries(info.Runtimes ?? {})) {
      const args = Array.isArray(r.runtimeArgs) ? r.runtimeArgs : []
      out[name] = { runtimeArgs: args.filter((a): a is string => typeof a === 'string') }
    }
    return out
  }

  startSidecar(spec: SidecarSpec): Promise<Sidecar> {
    return startSidecar(this.docker, spec)
  }

  /**
   * Removes everything carrying the run's label. Each request has a deadline and is retried
   * while the engine is away (a daemon restarting); what still fails is thrown after the rest.
   */
  async cleanup(runId: string): Promise<{ containers: number; networks: number; volumes: number }> {
    const filters = JSON.stringify({ label: [`${LABELS.runId}=${runId}`] })
    const removed = { containers: 0, networks: 0, volumes: 0 }
    const failures: string[] = []
    const call = <T>(what: string, fn: () => Promise<T>): Promise<T> =>
      retryWhileAway(() => withDeadline(fn(), engineTimeoutMs(), what), { attempts: 8 })
    const each = async (what: string, fn: () => Promise<unknown>): Promise<boolean> => {
      try {
        await call(what, fn)
        return true
      } catch (error) {
        if ((error as { statusCode?: number }).statusCode === 404) return false
        failures.push(`${what}: ${errorMessage(error)}`)
        return false
      }
    }
    const containers = await call('list containers', () =>
      this.docker.listContainers({ all: true, filters })
    )
    for (const c of containers) {
      const ok = await each(`remove container ${c.Id.slice(0, 12)}`, () =>
        this.docker.getContainer(c.Id).remove({ force: true, v: true })
      )
      if (ok) removed.containers++
    }
    for (const n of await call('list networks', () => this.docker.listNetworks({ filters }))) {
      if (await each(`remove network ${n.Name}`, () => this.docker.getNetwork(n.Id).remove()))
        removed.networks++
    }
    const volumes = await call('list volumes', () => this.docker.listVolumes({ filters }))
    for (const v of volumes.Volumes ?? []) {
      if (
        await each(`remove volume ${v.Name}`, () =>
          this.docker.getVolume(v.Name).remove({ force: true })
        )
      )
        removed.volumes++
    }
    if (failures.length > 0) throw new EngineFault('cleanup', new Error(failures.join('; ')))
    return removed
  }
}
