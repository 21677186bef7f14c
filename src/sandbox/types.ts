// The runtime boundary: the project's own types for everything the pipeline asks of a container
// engine. A backend (src/sandbox/docker/ today) implements `Runtime`; nothing outside src/sandbox/
// sees the engine's own types.
import type { Readable, Writable } from 'node:stream'
import type { AppliedSettings, ImagePlan, PublishedImageUse } from '../plan.js'

export type { AppliedSettings, ImagePlan }

export interface ResourceLimits {
  memoryBytes: number
  cpus: number
  pidsLimit: number
}

export interface MountSpec {
  /** Host path. */
  source: string
  target: string
  readOnly: boolean
}

/** One container, hardened by the backend: no capabilities, read-only root, init, limits. */
export interface ContainerSpec {
  name: string
  image: string
  command: string[]
  /** `uid:gid`, never root. */
  user: string
  workdir: string
  env: string[]
  labels: Record<string, string>
  /**
   * The one network the container joins, with the names it answers to there (service
   * containers); null: no network at all (loopback only).
   */
  network: { name: string; aliases?: string[] } | null
  /** OCI runtime name (runc, runsc, ...); the engine's default when absent. */
  runtime?: string
  limits: ResourceLimits
  /** Writable scratch folders (target → size in bytes): noexec, nosuid, owned by `user`. */
  tmpfs: Record<string, number>
  mounts: MountSpec[]
  sysctls?: Record<string, string>
}

/** A long-running helper container (the egress proxy, later service containers). */
export interface SidecarSpec extends ContainerSpec {
  /** More networks joined before start, each with the names the container answers to there. */
  networks?: { name: string; aliases: string[] }[]
  /** Whether the sidecar reads its standard input (written once with `Sidecar.input`). */
  stdin?: boolean
}

export interface NetworkSpec {
  name: string
  labels: Record<string, string>
  /** No route out, and no address of the bridge on the host: peers on it reach only each other. */
  internal: boolean
}

export interface Network {
  name: string
  remove(): Promise<void>
}

export interface Sidecar {
  stdout: Readable
  stderr: Readable
  /** The sidecar's address on one of its networks (undefined when it is not running). */
  address(network: string): Promise<string | undefined>
  /** Writes its standard input once and closes it. */
  input(data: string): void
  /** Resolves when the container exits (never rejects). */
  exited: Promise<{ exitCode: number | null; error?: string }>
  /** TERM, grace, KILL, drain the output, remove. */
  stop(graceMs: number): Promise<void>
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
  /** When the engine refused or failed the container: the reason. */
  error?: string
  /**
   * The error is a fault of the engine itself (connection lost, socket gone, no answer, a wait
   * never answered): the run cannot go on and ends with `infrastructure-error`, whatever comes
   * after (the engine may be back, but what it held of the run is not to be trusted).
   */
  engineFault?: boolean
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
  /** Which builder made the image in this run (absent: cached or pinned, nothing was built). */
  builder?: 'buildkit' | 'classic'
  warnings: string[]
  /**
   * Where the image came from: pulled from a registry in this run, built in this run, or found on
   * the engine (a build cache hit, an image already pulled, one restored from the image cache).
   */
  source?: 'pulled' | 'built' | 'cache'
  /** A preset image its release published (images/published.json): what was asked for, and why it was not used. */
  published?: PublishedImageUse
}

export interface ImageLog {
  info(line: string): void
}

/** A base image a saved image needs on the engine: as the Dockerfile writes it, and its ID. */
export interface ImageBase {
  ref: string
  id: string
}

/** Whether `Runtime.provideBase` made the base available (pulled by digest when absent). */
export type BaseProvided = { ok: true; pulled: boolean } | { ok: false; problem: string }

/** What `Runtime.loadImage` found in a saved image file. */
export interface LoadedImage {
  /** Whether the expected image (id and build key) is now on the engine. */
  ok: boolean
  id: string
  /** Images the file declared that the engine did not have (removed again when not ok). */
  added: string[]
  problem?: string
}

/** What the engine says about itself (recorded in the report's runner facts). */
export interface EngineFacts {
  version: string | null
  apiVersion: string | null
  os: string | null
}

/** The one interface through which the pipeline talks to a container engine. */
export interface Runtime {
  /** Checks the engine answers and the OCI runtime exists; throws a clear error otherwise. */
  preflight(runtime: string): Promise<void>
  /** Unknown facts are null; throws only on a fault of the engine itself. */
  engineFacts(): Promise<EngineFacts>
  /** Builds or resolves the image; builds of one key wait for each other on this machine. */
  resolveImage(
    plan: ImagePlan,
    log: ImageLog,
    options?: { holder?: string; signal?: AbortSignal }
  ): Promise<ImageInfo>
  /** create → start → wait with the deadline → TERM/grace/KILL → inspect → remove. */
  runPhase(spec: ContainerSpec, options: RunOptions): Promise<PhaseResult>
  createNetwork(spec: NetworkSpec): Promise<Network>
  /** Starts a sidecar with the same hardening and lifecycle as a phase. */
  startSidecar(spec: SidecarSpec): Promise<Sidecar>
  /**
   * The OCI runtimes the engine has and the arguments each is registered with (for the isolation
   * decision); optional for backends that cannot tell (then no tier counts as available).
   */
  ociRuntimes?(): Promise<Record<string, { runtimeArgs: string[] }>>
  /**
   * The agent image across machines (optional: a backend without them never reuses an image
   * built elsewhere). The key of the build's inputs, independent of this machine (undefined:
   * not cacheable); the image's build key; save to a file without its bases' layers (and the
   * bases it needs); provide such a base before a load; load a file and check it.
   */
  imageInputsKey?(plan: ImagePlan): Promise<string | undefined>
  imageBuildKey?(id: string): Promise<string | undefined>
  saveImage?(
    id: string,
    plan: ImagePlan,
    file: string
  ): Promise<{ buildKey: string; bases: ImageBase[] }>
  provideBase?(base: ImageBase): Promise<BaseProvided>
  loadImage?(file: string, expect: { id: string; buildKey: string }): Promise<LoadedImage>
  /** Removes every container, network and volume carrying the run's label. */
  cleanup(runId: string): Promise<{ containers: number; networks: number; volumes: number }>
}
