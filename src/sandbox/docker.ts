import Docker from 'dockerode'
import type { ContainerCreateOptions, ContainerInspectInfo } from 'dockerode'
import { ConfigurationError, InfrastructureError, errorMessage } from '../errors.js'
import { LABELS } from '../plan.js'
import type { AppliedSettings, PhaseResult, RunOptions, Sandbox } from './types.js'

/** Connects to the daemon named by DOCKER_HOST, or the default socket. */
export function connectDocker(): Docker {
  return new Docker()
}

export function dockerUnreachable(error: unknown): InfrastructureError {
  return new InfrastructureError(
    `the Docker engine is not reachable (${errorMessage(error)}); start it (bash scripts/ensure-docker.sh installs and starts one) or point DOCKER_HOST at it`,
    { cause: error }
  )
}

const STREAM_DRAIN_MS = 3000

export class DockerSandbox implements Sandbox {
  constructor(readonly docker: Docker = connectDocker()) {}

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

  async runPhase(spec: ContainerCreateOptions, options: RunOptions): Promise<PhaseResult> {
    const started = Date.now()
    const result: PhaseResult = {
      exitCode: null,
      timedOut: false,
      oomKilled: false,
      cancelled: false,
      durationMs: 0
    }
    let container: Docker.Container
    try {
      container = await this.docker.createContainer(spec)
    } catch (error) {
      result.error = `the daemon refused the container: ${errorMessage(error)}`
      result.durationMs = Date.now() - started
      return result
    }
    const stats = new StatsSampler()
    try {
      const stream = (await container.attach({
        stream: true,
        stdout: true,
        stderr: true
      })) as NodeJS.ReadableStream
      const ended = new Promise<void>((resolve) => {
        stream.on('end', resolve)
        stream.on('close', resolve)
        stream.on('error', () => resolve())
      })
      this.docker.modem.demuxStream(stream, options.stdout, options.stderr)
      const exited = container.wait({ condition: 'next-exit' })
      await container.start()
      stats.start(container)
      const outcome = await waitWithDeadline(exited, options)
      if (outcome !== 'exited') {
        result.timedOut = outcome === 'timeout'
        result.cancelled = outcome === 'cancelled'
        await stopGracefully(container, exited, options.graceMs)
      }
      await Promise.race([ended, delay(STREAM_DRAIN_MS)])
      const info = await container.inspect()
      result.exitCode = info.State.ExitCode
      result.oomKilled = info.State.OOMKilled
      result.applied = appliedSettings(info)
    } catch (error) {
      result.error = errorMessage(error)
    } finally {
      stats.stop()
      result.durationMs = Date.now() - started
      result.cpuSeconds = stats.cpuSeconds
      result.peakMemoryBytes = stats.peakMemoryBytes
      await container.remove({ force: true, v: true }).catch(() => undefined)
    }
    return result
  }

  async cleanup(runId: string): Promise<{ containers: number; networks: number; volumes: number }> {
    const filters = JSON.stringify({ label: [`${LABELS.runId}=${runId}`] })
    const removed = { containers: 0, networks: 0, volumes: 0 }
    const containers = await this.docker.listContainers({ all: true, filters })
    for (const c of containers) {
      await this.docker
        .getContainer(c.Id)
        .remove({ force: true, v: true })
        .then(() => removed.containers++)
        .catch(() => undefined)
    }
    const networks = await this.docker.listNetworks({ filters })
    for (const n of networks) {
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

type WaitOutcome = 'exited' | 'timeout' | 'cancelled'

async function waitWithDeadline(
  exited: Promise<unknown>,
  options: RunOptions
): Promise<WaitOutcome> {
  let timer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const deadline = new Promise<WaitOutcome>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), options.timeoutMs)
    if (options.signal) {
      onAbort = () => resolve('cancelled')
      if (options.signal.aborted) onAbort()
      else options.signal.addEventListener('abort', onAbort, { once: true })
    }
  })
  try {
    return await Promise.race([exited.then(() => 'exited' as const), deadline])
  } finally {
    clearTimeout(timer)
    if (onAbort) options.signal?.removeEventListener('abort', onAbort)
  }
}

/** SIGTERM, wait up to the grace period, SIGKILL, wait for the exit. */
async function stopGracefully(
  container: Docker.Container,
  exited: Promise<unknown>,
  graceMs: number
): Promise<void> {
  await container.kill({ signal: 'SIGTERM' }).catch(() => undefined)
  const gone = await Promise.race([exited.then(() => true), delay(graceMs).then(() => false)])
  if (!gone) {
    await container.kill({ signal: 'SIGKILL' }).catch(() => undefined)
    await Promise.race([exited, delay(10_000)])
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}

/** Reads the container's cgroup statistics while it runs: peak memory and CPU time. */
class StatsSampler {
  cpuSeconds?: number
  peakMemoryBytes?: number
  private stream?: NodeJS.ReadableStream & { destroy?: () => void }

  start(container: Docker.Container): void {
    container
      .stats({ stream: true })
      .then((s) => {
        const stream = s as unknown as NodeJS.ReadableStream & { destroy?: () => void }
        this.stream = stream
        let buffer = ''
        stream.on('data', (chunk: Buffer) => {
          buffer += chunk.toString('utf8')
          let nl: number
          while ((nl = buffer.indexOf('\n')) >= 0) {
            this.sample(buffer.slice(0, nl))
            buffer = buffer.slice(nl + 1)
          }
        })
        stream.on('error', () => undefined)
      })
      .catch(() => undefined)
  }

  private sample(line: string): void {
    try {
      const s = JSON.parse(line) as {
        cpu_stats?: { cpu_usage?: { total_usage?: number } }
        memory_stats?: { usage?: number; max_usage?: number }
      }
      const cpu = s.cpu_stats?.cpu_usage?.total_usage
      if (typeof cpu === 'number' && cpu > 0)
        this.cpuSeconds = Math.max(this.cpuSeconds ?? 0, cpu / 1e9)
      const mem = s.memory_stats?.max_usage ?? s.memory_stats?.usage
      if (typeof mem === 'number' && mem > 0)
        this.peakMemoryBytes = Math.max(this.peakMemoryBytes ?? 0, mem)
    } catch {
      // a partial or foreign line: ignore
    }
  }

  stop(): void {
    this.stream?.destroy?.()
  }
}

function appliedSettings(info: ContainerInspectInfo): AppliedSettings {
  const h = info.HostConfig as ContainerInspectInfo['HostConfig'] & {
    Runtime?: string
    ReadonlyRootfs?: boolean
    CapDrop?: string[]
    SecurityOpt?: string[]
    Init?: boolean
    NanoCpus?: number
    PidsLimit?: number
    Tmpfs?: Record<string, string>
    MemorySwap?: number
  }
  return {
    runtime: h.Runtime ?? 'runc',
    network: h.NetworkMode ?? '',
    user: info.Config.User,
    readOnlyRootfs: h.ReadonlyRootfs === true,
    capDrop: h.CapDrop ?? [],
    noNewPrivileges: (h.SecurityOpt ?? []).some((o: string) =>
      /^no-new-privileges(:true|=true)?$/.test(o)
    ),
    privileged: h.Privileged === true,
    init: h.Init === true,
    memoryBytes: h.Memory ?? 0,
    memorySwapBytes: h.MemorySwap ?? 0,
    cpus: (h.NanoCpus ?? 0) / 1e9,
    pidsLimit: h.PidsLimit ?? 0,
    tmpfs: h.Tmpfs ?? {},
    mounts: (info.Mounts ?? []).map((m) => ({
      source: m.Source,
      target: m.Destination,
      readOnly: m.RW === false
    }))
  }
}
