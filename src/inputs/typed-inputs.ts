// The run's typed inputs (`Inputs`, read by getInputs in src/inputs.ts), what they are read in
// (`InputContext`), and the defaults of the settings nobody gave.
import type { CacheScope } from '../cache/keys.js'
import type { ContinuationRecord, ContinueContext } from '../continue-context.js'
import type { EgressInputs } from '../egress/egress-inputs.js'
import type { EngineChoice, EngineFacts } from './engine.js'
import type { RunEvent } from '../event.js'
import type { IsolationRequest } from '../isolation/isolation.js'
import type { LoadedPolicy, PolicyRecord, TaskOrigin } from '../policy/policy-file.js'
import type { PublishedImage } from '../presets/published.js'
import type { ServiceSpec } from '../services/services-inputs.js'
import type { SetupInputs } from '../setup/setup-inputs.js'
import type { WorkspaceBound } from '../workspace/bounded.js'

export type NetworkMode = 'none' | 'allowlist'
export type CacheMode = 'auto' | 'off'

export interface Inputs {
  /** Absolute path of the repository to work on. */
  path: string
  ref: string
  /** Absolute path of the output folder. */
  outputDir: string
  /** Absolute path of the Dockerfile, when the image is built. */
  dockerfile?: string
  /** A digest-pinned image reference, when the image is not built. */
  image?: string
  /** Absolute path of the build context (default: the Dockerfile's folder). */
  buildContext?: string
  buildArgs: Record<string, string>
  allowUnpinnedBase: boolean
  agentCommand: string
  testCommand?: string
  /** The install phase: once, on the fresh workspace, before the baseline and the agent. */
  setup?: SetupInputs
  /** `dependency-cache` / `image-cache` (auto | off) and the scope the run's entries belong to. */
  cache?: { dependencies: CacheMode; image: CacheMode; scope: CacheScope }
  /** Service containers the test phases get on an internal network (docs/services.md). */
  services?: ServiceSpec[]
  /** `isolation` (auto or a tier) with the policy's fallback; absent: `runtime` as given. */
  isolation?: IsolationRequest & { fork: boolean | null }
  /** The task; `origin` is set by the entry once it is known (src/policy/task.ts). */
  task: {
    text: string
    source: 'text' | 'file'
    file?: string
    missing?: string
    origin?: TaskOrigin
  }
  /**
   * `continue-from` / `continue-context`: the earlier run this one continues (its downloaded
   * evidence folder, and what the command job found on the pull request).
   */
  continueFrom?: { dir: string; context: ContinueContext | null }
  /** Set by the entry once the earlier run is verified (src/pipeline/continuation.ts). */
  continuation?: {
    record: ContinuationRecord
    patch: Buffer | null
    /** Dependency files the carried patch changes (the isolation tier weighs them). */
    dependencyFiles: string[]
  }
  model?: string
  /** The agent preset (`agent`) whose defaults apply. */
  preset?: string
  /**
   * The image the release published for the preset (images/published.json): set only when the
   * run builds the preset's own Dockerfile with no build args or context of its own.
   */
  publishedImage?: PublishedImage
  network: NetworkMode
  /** With `network: allowlist`: the proxy's rules, credentials (secrets resolved) and image. */
  egress?: EgressInputs
  /** `engine`: the backend that runs the sandbox (Docker or Kubernetes), and why. */
  engine?: EngineChoice
  runtime: string
  timeoutMinutes: number
  graceSeconds: number
  memoryBytes: number
  cpus: number
  pidsLimit: number
  /** `workspace-size`: the bound of everything the sandbox writes. */
  workspace: WorkspaceBound
  /** uid:gid the containers run as; never 0. */
  user: string
  /** Names of host variables passed into the sandbox, with their values resolved at the edge. */
  env: { name: string; value: string }[]
  testReports: string[]
  /** Run the test command on the unchanged tree too, and classify each test by the change. */
  compareBase: boolean
  maxLogBytes: number
  /** Globs the agent may change (empty: anywhere). */
  allowedPaths: string[]
  /** The effective protected globs (defaults, extended or replaced). */
  protectedPaths: string[]
  maxChangedFiles: number
  maxDiffBytes: number
  /** What a malicious verdict of the threat review does: the approval acknowledges it, or the run fails. */
  threatReview: 'acknowledge' | 'block'
  dryRun: boolean
  runId: string
  /** Name of the run's artifact (default `airlock-<run id>-<attempt>`). */
  artifactName: string
  /** The policy file that applied (from the base commit), for the report. */
  policy: PolicyRecord
}

export interface InputContext {
  /** Paths (`path`, `dockerfile`, `build-context`, a task file) must stay inside this folder. */
  workspace: string
  /** The environment variables that `env` may name. */
  environment: NodeJS.ProcessEnv
  /** The workflow run's event, parsed once (src/event.ts); LOCAL_EVENT for the CLI. */
  event: RunEvent
  /** Host uid, to choose a non-root container user that can write the workspace. */
  hostUid: number
  hostCpus: number
  /** Default run id when `run-id` is not given. */
  defaultRunId: string
  /** What `engine: auto` looks at (default: read from `environment` and the Docker socket). */
  engineFacts?: EngineFacts
  /** The policy file read from the base commit; an input given explicitly overrides it. */
  policy?: LoadedPolicy
  /** An agent preset's bundled Dockerfile (outside the workspace), and the preset's name. */
  preset?: { name: string; dockerfile?: string; published?: PublishedImage }
}

export const DEFAULTS = {
  ref: 'HEAD',
  outputDir: 'airlock-out',
  network: 'none' as NetworkMode,
  runtime: 'runc',
  timeoutMinutes: 30,
  graceSeconds: 10,
  memory: '2g',
  cpus: 2,
  pidsLimit: 512,
  maxLogBytes: 5 * 1024 * 1024
}
