import * as fs from 'node:fs'
import * as path from 'node:path'
import { ConfigurationError } from './errors.js'
import { NO_POLICY, recordFor, withPolicy } from './policy/policy-file.js'
import type { LoadedPolicy, PolicyRecord, TaskOrigin } from './policy/policy-file.js'
import { readEgressInputs } from './egress/egress-inputs.js'
import type { EgressInputs } from './egress/egress-inputs.js'
import { DEFAULT_DIFF_LIMITS } from './path-rules.js'
import { checkAllowedPaths, resolveProtectedPaths } from './path-rules.js'
import { INPUT } from './input-names.js'
import { parseContinueContext } from './continue-context.js'
import type { ContinuationRecord, ContinueContext } from './continue-context.js'
import {
  bool,
  list,
  memory,
  oneOf,
  positiveInteger,
  positiveNumber,
  runtimeName
} from './input-read.js'
import type { InputReader } from './input-read.js'
import { boundedReader, outputFolder, taskInput, timerDuration } from './input-bounds.js'
import { existingDir, existingFile, insidePath, relativeInside } from './inputs/paths.js'
import {
  artifactName,
  checkPinnedImage,
  containerUser,
  defaultArtifactName,
  gitRef,
  keyValues,
  passedEnv,
  runId
} from './inputs/values.js'
import { SHARED_PROXY_INPUTS, readSetupInputs } from './setup/setup-inputs.js'
import type { SetupInputs } from './setup/setup-inputs.js'
import { servicesFor } from './services/services-inputs.js'
import type { ServiceSpec } from './services/services-inputs.js'
import { FALLBACK_INPUT } from './isolation/isolation.js'
import { isolationFor } from './isolation/isolation-inputs.js'
import type { IsolationRequest } from './isolation/isolation.js'
import { scopeForEvent } from './cache/keys.js'
import type { CacheScope } from './cache/keys.js'
import type { RunEvent } from './event.js'
import { readWorkspaceSize } from './workspace/workspace-inputs.js'
import type { WorkspaceBound } from './workspace/bounded.js'
import type { PublishedImage } from './presets/published.js'
import { engineFactsOf, readEngine } from './inputs/engine.js'
import type { EngineChoice, EngineFacts } from './inputs/engine.js'

export { INPUT } from './input-names.js'
export { bool, list, memory } from './input-read.js'
export type { InputReader } from './input-read.js'

export type NetworkMode = 'none' | 'allowlist'
export type CacheMode = 'auto' | 'off'
const CACHE_MODES = ['auto', 'off'] as const

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

export function getInputs(given: InputReader, ctx: InputContext): Inputs {
  const policy = ctx.policy ?? NO_POLICY
  // Every value (given or from the policy file) is bounded in shape before it is interpreted.
  const read = boundedReader(withPolicy(given, policy.policy))
  const workspace = path.resolve(ctx.workspace)
  const repoPath = insidePath(INPUT.path, read(INPUT.path) ?? '.', workspace)
  const dockerfileRaw = read(INPUT.dockerfile)
  const image = read(INPUT.image)
  if (dockerfileRaw !== undefined && image !== undefined) {
    throw new ConfigurationError(
      `${INPUT.dockerfile}/${INPUT.image}`,
      'give one of them, not both: `dockerfile` builds the agent image, `image` uses a pinned one'
    )
  }
  if (dockerfileRaw === undefined && image === undefined) {
    throw new ConfigurationError(
      `${INPUT.dockerfile}/${INPUT.image}`,
      'give one of them: `dockerfile: path/to/Dockerfile` or `image: name@sha256:<64 hex digits>`'
    )
  }
  const dockerfile =
    dockerfileRaw === undefined
      ? undefined
      : dockerfileRaw === ctx.preset?.dockerfile
        ? dockerfileRaw
        : existingFile(INPUT.dockerfile, dockerfileRaw, workspace)
  if (image !== undefined) checkPinnedImage(image)
  const buildContextRaw = read(INPUT.buildContext)
  if (buildContextRaw !== undefined && dockerfile === undefined) {
    throw new ConfigurationError(
      INPUT.buildContext,
      'only applies with `dockerfile`; remove it or give a dockerfile'
    )
  }
  const buildContext =
    buildContextRaw === undefined
      ? undefined
      : existingDir(INPUT.buildContext, buildContextRaw, workspace)

  const agentCommand = read(INPUT.agentCommand)
  if (agentCommand === undefined || agentCommand.trim() === '') {
    throw new ConfigurationError(
      INPUT.agentCommand,
      'is required: the shell command that runs the agent in the sandbox'
    )
  }
  const network = oneOf(INPUT.network, read(INPUT.network) ?? DEFAULTS.network, [
    'none',
    'allowlist'
  ] as const)
  const testCommand = read(INPUT.testCommand)
  const compareBase = bool(INPUT.compareBase, read(INPUT.compareBase), false)
  if (compareBase && testCommand === undefined) {
    throw new ConfigurationError(
      INPUT.compareBase,
      'needs `test-command`: it runs the tests on the unchanged tree too'
    )
  }

  const outputDir = read(INPUT.outputDir) ?? DEFAULTS.outputDir
  const runtime = runtimeName(INPUT.runtime, read(INPUT.runtime) ?? DEFAULTS.runtime)

  const env = passedEnv(read(INPUT.env), ctx.environment)
  // With network none, the install phase alone may use the proxy settings.
  const setupGiven = read(INPUT.setupCommand) !== undefined
  const egressRead: InputReader =
    setupGiven && network === 'none'
      ? (name) => (SHARED_PROXY_INPUTS.includes(name) ? undefined : read(name))
      : read
  const egress = readEgressInputs(
    egressRead,
    network,
    workspace,
    ctx.environment,
    env.map((e) => e.name)
  )

  const setup = readSetupInputs(read, egress)

  const cpus = positiveNumber(INPUT.cpus, read(INPUT.cpus) ?? String(DEFAULTS.cpus))
  if (cpus > ctx.hostCpus) {
    throw new ConfigurationError(
      INPUT.cpus,
      `${cpus} is more than this machine has (${ctx.hostCpus}); use at most ${ctx.hostCpus}`
    )
  }

  return {
    path: repoPath,
    ref: gitRef(read(INPUT.ref) ?? DEFAULTS.ref),
    outputDir: outputFolder(INPUT.outputDir, outputDir, path.resolve(workspace, outputDir)),
    dockerfile,
    image,
    buildContext: buildContext ?? (dockerfile === undefined ? undefined : path.dirname(dockerfile)),
    buildArgs: keyValues(INPUT.buildArgs, read(INPUT.buildArgs)),
    allowUnpinnedBase: bool(INPUT.allowUnpinnedBase, read(INPUT.allowUnpinnedBase), false),
    agentCommand,
    testCommand,
    ...(setup !== undefined ? { setup } : {}),
    cache: {
      dependencies: oneOf(
        INPUT.dependencyCache,
        read(INPUT.dependencyCache) ?? 'auto',
        CACHE_MODES
      ),
      // A local engine keeps the images it built: a copy of each in the cache folder only costs
      // disk. On a GitHub runner (fresh each time) the image cache is what avoids a rebuild.
      image: oneOf(
        INPUT.imageCache,
        read(INPUT.imageCache) ?? (ctx.environment.GITHUB_ACTIONS === 'true' ? 'auto' : 'off'),
        CACHE_MODES
      ),
      scope: scopeForEvent(ctx.event, realPath(repoPath))
    },
    services: servicesFor(read),
    ...isolationFor(
      read,
      given,
      policy.policy.values[FALLBACK_INPUT] ?? null,
      ctx.event.pullRequest?.fork ?? null,
      // The CLI's event (no name): a run without a base compares with the default branch.
      ctx.event.name === ''
    ),
    task: taskInput(INPUT.task, read(INPUT.task), workspace),
    ...continueFromInput(read, workspace),
    model: read(INPUT.model),
    ...(ctx.preset !== undefined ? { preset: ctx.preset.name } : {}),
    ...(ctx.preset?.published !== undefined &&
    dockerfile === ctx.preset.dockerfile &&
    buildContextRaw === undefined &&
    read(INPUT.buildArgs) === undefined
      ? { publishedImage: ctx.preset.published }
      : {}),
    network,
    ...(egress !== undefined ? { egress } : {}),
    engine: readEngine(read, ctx.engineFacts ?? engineFactsOf(ctx.environment, fs.existsSync)),
    runtime,
    timeoutMinutes: timerDuration(
      INPUT.timeoutMinutes,
      read(INPUT.timeoutMinutes) ?? String(DEFAULTS.timeoutMinutes),
      60_000,
      'minutes',
      false
    ),
    graceSeconds: timerDuration(
      INPUT.graceSeconds,
      read(INPUT.graceSeconds) ?? String(DEFAULTS.graceSeconds),
      1000,
      'seconds',
      true
    ),
    memoryBytes: memory(read(INPUT.memory) ?? DEFAULTS.memory),
    cpus,
    pidsLimit: positiveInteger(
      INPUT.pidsLimit,
      read(INPUT.pidsLimit) ?? String(DEFAULTS.pidsLimit)
    ),
    workspace: readWorkspaceSize(read),
    user: containerUser(read(INPUT.user), ctx.hostUid),
    env,
    testReports: list(read(INPUT.testReports)).map((p) => relativeInside(INPUT.testReports, p)),
    compareBase,
    maxLogBytes: positiveInteger(
      INPUT.maxLogBytes,
      read(INPUT.maxLogBytes) ?? String(DEFAULTS.maxLogBytes)
    ),
    allowedPaths: checkAllowedPaths(list(read(INPUT.allowedPaths)), INPUT.allowedPaths),
    protectedPaths: resolveProtectedPaths(list(read(INPUT.protectedPaths)), INPUT.protectedPaths),
    maxChangedFiles: positiveInteger(
      INPUT.maxChangedFiles,
      read(INPUT.maxChangedFiles) ?? String(DEFAULT_DIFF_LIMITS.maxChangedFiles)
    ),
    maxDiffBytes: positiveInteger(
      INPUT.maxDiffBytes,
      read(INPUT.maxDiffBytes) ?? String(DEFAULT_DIFF_LIMITS.maxDiffBytes)
    ),
    dryRun: bool(INPUT.dryRun, read(INPUT.dryRun), false),
    runId: runId(read(INPUT.runId) ?? ctx.defaultRunId),
    artifactName: artifactName(
      read(INPUT.artifactName) ?? defaultArtifactName(ctx.environment, ctx.defaultRunId)
    ),
    policy: recordFor(policy, given)
  }
}

/** `continue-from` (a folder path, anywhere on the runner) and `continue-context` with it. */
function continueFromInput(read: InputReader, workspace: string): Pick<Inputs, 'continueFrom'> {
  const dir = read(INPUT.continueFrom)
  const context = read(INPUT.continueContext)
  if (dir === undefined) {
    if (context !== undefined)
      throw new ConfigurationError(
        INPUT.continueContext,
        "is given without continue-from; download the earlier run's artifact and name its folder in continue-from"
      )
    return {}
  }
  return {
    continueFrom: {
      dir: path.resolve(workspace, dir),
      context: context === undefined ? null : parseContinueContext(INPUT.continueContext, context)
    }
  }
}

/** A folder's real path when it exists (the repository's identity on this machine), else as given. */
function realPath(p: string): string {
  try {
    return fs.realpathSync(p)
  } catch {
    return p
  }
}
