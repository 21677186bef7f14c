import type { ContainerCreateOptions } from 'dockerode'
import type { Writable } from 'node:stream'

/** The sandbox settings as Docker actually applied them, read back from `inspect`. */
export interface AppliedSettings {
  runtime: string
  network: string
  user: string
  readOnlyRootfs: boolean
  capDrop: string[]
  noNewPrivileges: boolean
  privileged: boolean
  init: boolean
  memoryBytes: number
  memorySwapBytes: number
  cpus: number
  pidsLimit: number
  tmpfs: Record<string, string>
  mounts: { source: string; target: string; readOnly: boolean }[]
}

export interface PhaseResult {
  exitCode: number | null
  timedOut: boolean
  oomKilled: boolean
  cancelled: boolean
  durationMs: number
  /** CPU time used, from the container's cgroup statistics (undefined when no sample was taken). */
  cpuSeconds?: number
  peakMemoryBytes?: number
  applied?: AppliedSettings
  /** When the daemon refused or failed the container: the reason. */
  error?: string
}

export interface RunOptions {
  timeoutMs: number
  graceMs: number
  stdout: Writable
  stderr: Writable
  /** Aborting ends the phase like a timeout (TERM, grace, KILL) and marks it cancelled. */
  signal?: AbortSignal
}

export interface ImageInfo {
  /** What the user referenced: the pinned image, or the Dockerfile path. */
  ref: string
  id: string
  /** Pinned digests (or local image IDs) of the base images the Dockerfile names. */
  baseDigests: string[]
  dockerfileSha256?: string
  cached: boolean
  warnings: string[]
}

/** The one interface through which the pipeline talks to Docker. */
export interface Sandbox {
  /** Checks the daemon answers and the runtime exists; throws a clear error otherwise. */
  preflight(runtime: string): Promise<void>
  runPhase(spec: ContainerCreateOptions, options: RunOptions): Promise<PhaseResult>
  /** Removes every container, network and volume carrying the run's label. */
  cleanup(runId: string): Promise<{ containers: number; networks: number; volumes: number }>
}
