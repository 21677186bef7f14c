// The Docker backend of the runtime boundary: the only code that imports dockerode.
import Docker from 'dockerode'
import type { Host } from '../../host.js'
import { ConfigurationError, InfrastructureError, errorMessage } from '../../errors.js'
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
import { engineTimeoutMs, isEngineError, withDeadline } from '../engine-faults.js'
import { removeRunObjects } from '../cleanup.js'
import type { CleanupEngine, Removed } from '../cleanup.js'
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

/** The host's facts the Docker backend acts on (read at the edge, `readHost`). */
export type DockerSettings = Pick<Host, 'docker' | 'buildkit' | 'lockDir'>

export class DockerRuntime implements Runtime {
  /** Connects to the daemon named by DOCKER_HOST, or the default socket. */
  constructor(
    private readonly settings: DockerSettings,
    private readonly docker: Docker = new Docker()
  ) {}

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
    return resolveImage(this.docker, plan, log, {
      ...options,
      lockDir: this.settings.lockDir,
      ...(this.settings.buildkit !== undefined ? { buildkit: this.settings.buildkit } : {})
    })
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
    return runPhase(this.docker, spec, options, this.settings.docker.host)
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

  /** Removes everything carrying the run's label (see removeRunObjects). */
  cleanup(runId: string): Promise<Removed> {
    return removeRunObjects(dockerodeCleanupEngine(this.docker), runId)
  }
}

/** The cleanup engine over dockerode (the post step uses the HTTP one: same requests). */
function dockerodeCleanupEngine(docker: Docker): CleanupEngine {
  return {
    async list(kind, filters) {
      if (kind === 'container') {
        const found = await docker.listContainers({ all: true, filters })
        return found.map((c) => ({ id: c.Id, name: c.Id.slice(0, 12) }))
      }
      if (kind === 'network') {
        return (await docker.listNetworks({ filters })).map((n) => ({ id: n.Id, name: n.Name }))
      }
      const found = await docker.listVolumes({ filters })
      return (found.Volumes ?? []).map((v) => ({ id: v.Name, name: v.Name }))
    },
    async remove(kind, id) {
      if (kind === 'container') await docker.getContainer(id).remove({ force: true, v: true })
      else if (kind === 'network') await docker.getNetwork(id).remove()
      else await docker.getVolume(id).remove({ force: true })
    }
  }
}
