import * as fs from 'node:fs'
import * as path from 'node:path'
import { ConfigurationError } from './errors.js'
import { NO_POLICY, recordFor, withPolicy } from './policy/policy-file.js'
import { readEgressInputs } from './egress/egress-inputs.js'
import { DEFAULT_DIFF_LIMITS } from './path-rules.js'
import { checkAllowedPaths, resolveProtectedPaths } from './path-rules.js'
import { INPUT } from './input-names.js'
import { parseContinueContext } from './continue-context.js'
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
import { servicesFor } from './services/services-inputs.js'
import { FALLBACK_INPUT } from './isolation/isolation.js'
import { isolationFor } from './isolation/isolation-inputs.js'
import { scopeForEvent } from './cache/keys.js'
import { readWorkspaceSize } from './workspace/workspace-inputs.js'
import { engineFactsOf, readEngine } from './inputs/engine.js'

export { INPUT } from './input-names.js'
export { bool, list, memory } from './input-read.js'
export type { InputReader } from './input-read.js'

import { DEFAULTS } from './inputs/typed-inputs.js'
import type { InputContext, Inputs } from './inputs/typed-inputs.js'

export type { CacheMode, InputContext, Inputs, NetworkMode } from './inputs/typed-inputs.js'
export { DEFAULTS } from './inputs/typed-inputs.js'

const CACHE_MODES = ['auto', 'off'] as const

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
    threatReview: oneOf(INPUT.threatReview, read(INPUT.threatReview) ?? 'acknowledge', [
      'acknowledge',
      'block'
    ] as const),
    dryRun: bool(INPUT.dryRun, read(INPUT.dryRun), false),
    runId: runId(read(INPUT.runId) ?? ctx.defaultRunId),
    artifactName: artifactName(
      read(INPUT.artifactName) ?? defaultArtifactName(ctx.event, ctx.defaultRunId)
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
