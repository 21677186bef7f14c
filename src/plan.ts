import { createHash } from 'node:crypto'
import type { EngineChoice } from './inputs/engine.js'
import type { Inputs, NetworkMode } from './inputs.js'
import type { PolicyRecord, TaskOrigin } from './policy/policy-file.js'
import { egressSecrets, planEgress } from './egress/plan.js'
import type { EgressPlan, EgressSecrets } from './egress/plan.js'
import type { ServiceSpec } from './services/services-inputs.js'
import type { IsolationRequest } from './isolation/isolation.js'
import type { ContinuationRecord } from './continue-context.js'
import { LABELS } from './labels.js'
import type { SetupPlan } from './setup/setup-inputs.js'
import type { PublishedImage } from './presets/published.js'

/** Where things are inside every container the pipeline starts. */
export const SANDBOX_PATHS = {
  workspace: '/workspace',
  task: '/airlock/task.md',
  /** Writable folder of the agent phase for files about the run (usage.json); not in the diff. */
  out: '/airlock/out',
  tmp: '/tmp'
} as const

/** `baseline` runs the test command on the unchanged tree (with `compare-base`). */
export type PhaseName = 'setup' | 'baseline' | 'agent' | 'tests'

export interface PhasePlan {
  name: PhaseName
  /** argv of the container's process. */
  command: string[]
  network: NetworkMode
  timeoutMs: number
  graceMs: number
  /** Whether /workspace is mounted writable. */
  workspaceWritable: boolean
}

export interface SandboxSettings {
  runtime: string
  /**
   * Set by the resolve step when `runtime` is gVisor's network entry (runsc-net) only because some
   * container needs a network: the entry for the containers without one (runsc, registered with
   * --network=none: no network stack at all).
   */
  offlineRuntime?: string
  network: NetworkMode
  user: string
  readOnlyRootfs: true
  capDrop: ['ALL']
  noNewPrivileges: true
  init: true
  memoryBytes: number
  cpus: number
  pidsLimit: number
  /** tmpfs mounts: path → size in bytes, always noexec,nosuid,nodev. */
  tmpfs: Record<string, number>
  /** `workspace-size`: the filesystem holding every folder the sandbox writes. */
  workspace: { sizeBytes: number; required: boolean }
}

/** The sandbox settings as the engine actually applied them, read back after the phase ran. */
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

export type ImagePlan =
  | {
      kind: 'build'
      dockerfile: string
      context: string
      buildArgs: Record<string, string>
      allowUnpinnedBase: boolean
      /**
       * The preset's image as its release published it: pulled by digest instead of built, unless
       * this checkout's build inputs differ from the release's or the registry cannot be reached.
       */
      published?: PublishedImage
    }
  | { kind: 'pinned'; ref: string }

/** What became of the plan's published image: what was asked for, and whether it was used. */
export interface PublishedImageUse {
  image: string
  digest: string
  version: string
  repository: string
  used: boolean
  /** Why it was built instead (the checkout differs from the release, the registry failed). */
  reason?: string
}

/** Everything the run will do, as data. Printed by `airlock plan`; holds no secret values. */
export interface RunPlan {
  runId: string
  repo: { path: string; ref: string }
  outputDir: string
  image: ImagePlan
  task: {
    sha256: string
    bytes: number
    source: 'text' | 'file'
    file?: string
    origin?: TaskOrigin
  }
  /** A follow-up run: the earlier run it continues and whether its patch is carried. */
  continuation?: ContinuationRecord
  /** Dependency files the carried earlier patch changes: `isolation: auto` weighs them. */
  carriedDependencyFiles?: string[]
  model?: string
  /** The agent preset (`agent`) that filled defaults, recorded in the report. */
  preset?: string
  sandbox: SandboxSettings
  /** `engine` when not the default docker: the backend chosen and why (docs/kubernetes.md). */
  engine?: EngineChoice
  /** With `network: allowlist`: the egress proxy's rules (docs/egress.md). */
  egress?: EgressPlan
  /** The install phase (docs/setup.md): registries it may reach and the proxy that carries it. */
  setup?: SetupPlan
  /** `isolation`: the tier is decided at run time from the risk facts (docs/isolation.md). */
  isolation: (IsolationRequest & { fork: boolean | null }) | null
  /**
   * The dependency cache of the install phase and the agent image across machines, and the
   * scope this run's cache entries belong to (docs/setup.md).
   */
  cache: { dependencies: boolean; image: boolean; scope: string }
  /** Service containers each test-command phase gets (fresh per phase), reachable by name. */
  services: ServiceSpec[]
  /** Names of the host variables passed in (values are resolved at run time, never printed). */
  env: string[]
  phases: PhasePlan[]
  capture: { maxLogBytes: number; testReports: string[] }
  policy: {
    allowedPaths: string[]
    protectedPaths: string[]
    maxChangedFiles: number
    maxDiffBytes: number
    /** What a malicious threat review verdict does (docs/report.md#threat-review). */
    threatReview: 'acknowledge' | 'block'
  }
  labels: Record<string, string>
  dryRun: boolean
  /** The policy file (from the base commit) these settings came from. */
  policyFile: PolicyRecord
}

const TMPFS_BYTES = { [SANDBOX_PATHS.tmp]: 256 * 1024 * 1024 }

export function planRun(inputs: Inputs): RunPlan {
  const timeoutMs = Math.round(inputs.timeoutMinutes * 60_000)
  const graceMs = Math.round(inputs.graceSeconds * 1000)
  const phases: PhasePlan[] = [
    {
      name: 'agent',
      command: ['/bin/sh', '-c', inputs.agentCommand],
      network: inputs.network,
      timeoutMs,
      graceMs,
      workspaceWritable: true
    }
  ]
  if (inputs.setup !== undefined) {
    phases.unshift({
      name: 'setup',
      command: ['/bin/sh', '-c', inputs.setup.command],
      network: inputs.setup.allow.length > 0 ? 'allowlist' : 'none',
      timeoutMs,
      graceMs,
      workspaceWritable: true
    })
  }
  if (inputs.testCommand !== undefined && inputs.compareBase) {
    phases.splice(inputs.setup !== undefined ? 1 : 0, 0, {
      name: 'baseline',
      command: ['/bin/sh', '-c', inputs.testCommand],
      network: 'none',
      timeoutMs,
      graceMs,
      workspaceWritable: true
    })
  }
  if (inputs.testCommand !== undefined) {
    phases.push({
      name: 'tests',
      command: ['/bin/sh', '-c', inputs.testCommand],
      network: 'none',
      timeoutMs,
      graceMs,
      workspaceWritable: true
    })
  }
  return {
    runId: inputs.runId,
    repo: { path: inputs.path, ref: inputs.ref },
    outputDir: inputs.outputDir,
    image:
      inputs.image !== undefined
        ? { kind: 'pinned', ref: inputs.image }
        : {
            kind: 'build',
            dockerfile: inputs.dockerfile as string,
            context: inputs.buildContext as string,
            buildArgs: inputs.buildArgs,
            allowUnpinnedBase: inputs.allowUnpinnedBase,
            ...(inputs.publishedImage !== undefined ? { published: inputs.publishedImage } : {})
          },
    task: {
      sha256: sha256(inputs.task.text),
      bytes: Buffer.byteLength(inputs.task.text),
      source: inputs.task.source,
      ...(inputs.task.file !== undefined ? { file: inputs.task.file } : {}),
      ...(inputs.task.origin !== undefined ? { origin: inputs.task.origin } : {})
    },
    ...(inputs.continuation !== undefined ? { continuation: inputs.continuation.record } : {}),
    ...(inputs.continuation !== undefined && inputs.continuation.dependencyFiles.length > 0
      ? { carriedDependencyFiles: inputs.continuation.dependencyFiles }
      : {}),
    ...(inputs.model !== undefined ? { model: inputs.model } : {}),
    ...(inputs.preset !== undefined ? { preset: inputs.preset } : {}),
    ...(inputs.engine !== undefined && inputs.engine.requested !== 'docker'
      ? { engine: inputs.engine }
      : {}),
    sandbox: {
      runtime: inputs.runtime,
      network: inputs.network,
      user: inputs.user,
      readOnlyRootfs: true,
      capDrop: ['ALL'],
      noNewPrivileges: true,
      init: true,
      memoryBytes: inputs.memoryBytes,
      cpus: inputs.cpus,
      pidsLimit: inputs.pidsLimit,
      tmpfs: { ...TMPFS_BYTES },
      workspace: { ...inputs.workspace }
    },
    ...(inputs.egress !== undefined ? { egress: planEgress(inputs.egress) } : {}),
    ...(inputs.setup !== undefined
      ? {
          setup: {
            presets: inputs.setup.presets,
            allowHosts: inputs.setup.allow,
            proxy: inputs.setup.proxy
              ? {
                  image: inputs.setup.proxy.image,
                  hostMap: inputs.setup.proxy.hostMap,
                  network: inputs.setup.proxy.network ?? null
                }
              : null
          }
        }
      : {}),
    cache: {
      dependencies: inputs.setup !== undefined && inputs.cache?.dependencies === 'auto',
      image: inputs.image === undefined && inputs.cache?.image === 'auto',
      scope: inputs.cache?.scope ?? 'local'
    },
    services: inputs.services ?? [],
    isolation: inputs.isolation ?? null,
    env: inputs.env.map((e) => e.name),
    phases,
    capture: { maxLogBytes: inputs.maxLogBytes, testReports: inputs.testReports },
    policy: {
      allowedPaths: inputs.allowedPaths,
      protectedPaths: inputs.protectedPaths,
      maxChangedFiles: inputs.maxChangedFiles,
      maxDiffBytes: inputs.maxDiffBytes,
      threatReview: inputs.threatReview
    },
    labels: { [LABELS.managed]: 'true', [LABELS.runId]: inputs.runId },
    dryRun: inputs.dryRun,
    policyFile: inputs.policy
  }
}

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}

/**
 * The run's secret values, beside the plan and never in it: one typed value per stage that needs
 * one. The plan holds what they are for (routes, variable names, the task's hash).
 */
export interface RunSecrets {
  /** The task text (the plan only holds its hash). */
  task: string
  /** The `env` values passed into the sandbox. */
  env: { name: string; value: string }[]
  /** With `network: allowlist`: each credential route's secret (and the extra CA's text). */
  egress?: EgressSecrets
  /** Other values to mask in every output (credentials the run holds). */
  secrets?: string[]
  /** A follow-up on the same head: the earlier run's patch, applied before the agent starts. */
  carry?: Buffer
}

/** The secrets of a run, from the same inputs as its plan. */
export function secretsOf(inputs: Inputs): RunSecrets {
  return {
    task: inputs.task.text,
    env: inputs.env,
    ...(inputs.egress !== undefined ? { egress: egressSecrets(inputs.egress) } : {}),
    ...(inputs.continuation?.patch ? { carry: inputs.continuation.patch } : {})
  }
}
