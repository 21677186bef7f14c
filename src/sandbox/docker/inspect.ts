// Raw engine answers mapped to the project's types: inspect results and cgroup statistics.
import type Docker from 'dockerode'
import type { ContainerInspectInfo } from 'dockerode'
import type { AppliedSettings, EngineFacts } from '../types.js'
import { errorMessage } from '../../errors.js'
import { withDeadline } from '../engine-faults.js'

export function appliedSettings(info: ContainerInspectInfo): AppliedSettings {
  // The fields read back, as the engine reports them (dockerode types several of them `any`).
  const h = info.HostConfig as {
    Runtime?: string
    NetworkMode?: string
    ReadonlyRootfs?: boolean
    CapDrop?: string[]
    SecurityOpt?: string[]
    Privileged?: boolean
    Init?: boolean
    Memory?: number
    MemorySwap?: number
    NanoCpus?: number
    PidsLimit?: number
    Tmpfs?: Record<string, string>
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

/** `docker version`, with anything missing or mistyped as null. */
export function engineFacts(v: unknown): EngineFacts {
  const o = (typeof v === 'object' && v !== null ? v : {}) as Record<string, unknown>
  const str = (x: unknown): string | null => (typeof x === 'string' ? x : null)
  return { version: str(o.Version), apiVersion: str(o.ApiVersion), os: str(o.Os) }
}

/** How long `settled` waits for the statistics stream's first word. */
const FIRST_SAMPLE_MS = 2000

/** Reads the container's cgroup statistics while it runs: peak memory and CPU time. */
export class StatsSampler {
  cpuSeconds?: number
  peakMemoryBytes?: number
  private stream?: NodeJS.ReadableStream & { destroy?: () => void }
  private stopped = false

  /** Why the engine failed the statistics (request refused, stream cut, no answer). */
  private failure: string | undefined
  private ready: Promise<void> = Promise.resolve()
  /** Settles with the first sample, or when the stream ends, closes or fails. */
  private heard: Promise<void> = Promise.resolve()
  private hear: () => void = () => undefined

  /** `timeoutMs`: the deadline of the statistics request (the host's engineTimeoutMs). */
  constructor(private readonly timeoutMs: number) {}

  start(container: Docker.Container): void {
    this.ready = withDeadline(container.stats({ stream: true }), this.timeoutMs, 'stats')
      .then((stream: NodeJS.ReadableStream & { destroy?: () => void }) => {
        this.stream = stream
        if (this.stopped) return this.stop()
        this.heard = new Promise<void>((resolve) => (this.hear = resolve))
        let buffer = ''
        stream.on('data', (chunk: Buffer) => {
          this.hear()
          buffer += chunk.toString('utf8')
          let nl: number
          while ((nl = buffer.indexOf('\n')) >= 0) {
            this.sample(buffer.slice(0, nl))
            buffer = buffer.slice(nl + 1)
          }
        })
        let ended = false
        stream.on('end', () => {
          ended = true
          this.hear()
        })
        stream.on('error', (e: unknown) => {
          if (!this.stopped) this.failure ??= errorMessage(e)
          this.hear()
        })
        stream.on('close', () => {
          if (!ended && !this.stopped) this.failure ??= 'the stream closed before its end'
          this.hear()
        })
      })
      .catch((e: unknown) => {
        this.failure ??= errorMessage(e)
      })
  }

  /** Undefined when the statistics came through; else why the engine failed them. */
  async settled(): Promise<string | undefined> {
    await this.ready
    // The engine sends the first sample at once: a stream cut before it is a failure too.
    let timer: NodeJS.Timeout | undefined
    await Promise.race([this.heard, new Promise((r) => (timer = setTimeout(r, FIRST_SAMPLE_MS)))])
    clearTimeout(timer)
    return this.failure
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
    this.stopped = true
    this.stream?.destroy?.()
  }
}
