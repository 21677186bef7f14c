// The Docker backend of the runtime boundary: the only code that imports dockerode.
import Docker from 'dockerode'
import { ConfigurationError, InfrastructureError, errorMessage } from '../../errors.js'
import { LABELS } from '../../plan.js'
import type { ImagePlan } from '../../plan.js'
import type {
  ContainerSpec,
  EngineFacts,
  ImageInfo,
  ImageLog,
  Network,
  NetworkSpec,
  PhaseResult,
  RunOptions,
  Runtime,
  Sidecar,
  SidecarSpec
} from '../types.js'
import { resolveImage } from './image.js'
import { engineFacts } from './inspect.js'
import { runPhase } from './phase.js'
import { startSidecar } from './sidecar.js'

export function dockerUnreachable(error: unknown): InfrastructureError {
  return new InfrastructureError(
    `the Docker engine is not reachable (${errorMessage(error)}); start it (bash scripts/ensure-docker.sh installs and starts one) or point DOCKER_HOST at it`,
    { cause: error }
  )
}

export class DockerRuntime implements Runtime {
  /** Connects to the daemon named by DOCKER_HOST, or the default socket. */
  constructor(private readonly docker: Docker = new Docker()) {}

  async preflight(runtime: string): Promise<void> {
    let info: { Runtimes?: Record<string, unknown> }
    try {
      info = (await this.docker.info()) as { Runtimes?: Record<string, unknown> }
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

  async engineFacts(): Promise<EngineFacts> {
    return engineFacts(await this.docker.version().catch(() => undefined))
  }

  resolveImage(plan: ImagePlan, log: ImageLog): Promise<ImageInfo> {
    return resolveImage(this.docker, plan, log)
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

  startSidecar(spec: SidecarSpec): Promise<Sidecar> {
    return startSidecar(this.docker, spec)
  }

  async cleanup(runId: string): Promise<{ containers: number; networks: number; volumes: number }> {
    const filters = JSON.stringify({ label: [`${LABELS.runId}=${runId}`] })
    const removed = { containers: 0, networks: 0, volumes: 0 }
    for (const c of await this.docker.listContainers({ all: true, filters })) {
      await this.docker
        .getContainer(c.Id)
        .remove({ force: true, v: true })
        .then(() => removed.containers++)
        .catch(() => undefined)
    }
    for (const n of await this.docker.listNetworks({ filters })) {
      await this.docker
        .getNetwork(n.Id)
        .remove()
        .then(() => removed.networks++)
        .catch(() => undefined)
    }
    const volumes = await this.docker.listVolumes({ filters })
    for (const v of volumes.Volumes ?? []) {
      await this.docker
        .getVolume(v.Name)
        .remove({ force: true })
        .then(() => removed.volumes++)
        .catch(() => undefined)
    }
    return removed
  }
}
