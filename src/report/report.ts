import type { DiffRecord } from '../evidence/capture.js'
import type { TestCase, TestReportSource, TestSummary } from '../evidence/test-reports/index.js'
import type { Comparison } from '../evidence/compare.js'
import type { AppliedSettings, PublishedImageUse } from '../plan.js'
import type { PolicyRecord, TaskOrigin } from '../policy/policy-file.js'
import type { EgressSummary } from '../egress/evidence.js'
import type { DependencyFile, RunnerFacts, UsageRead } from '../evidence/metadata.js'
import type { PolicyFinding } from '../evidence/path-policy.js'
import type { TokenUsage } from '../evidence/cost.js'
import type { ServiceReport } from '../services/record.js'
import type { IsolationDecision } from '../isolation/isolation.js'
import type { CacheUse } from '../cache/record.js'
import type { LockfileHashes } from '../evidence/lockfiles.js'
import type { ResolvedTrees } from '../evidence/resolved.js'
import type { SetupEgress } from '../setup/record.js'
import type { TestsDiagnosis } from '../evidence/diagnosis.js'
import type { AgentAnswer } from '../evidence/answer.js'
import type { FindingsRecord } from '../evidence/findings.js'
import type { ThreatReviewRecord } from '../threat-review/review.js'
import type { CostEstimate } from '../prices.js'
import type { ContinuationRecord } from '../continue-context.js'

export type { CacheUse, LockfileHashes }

export const SCHEMA_VERSION = 1

export type Outcome =
  | 'success'
  | 'agent-failed'
  | 'tests-failed'
  | 'timed-out'
  | 'policy-violation'
  | 'infrastructure-error'
  | 'configuration-error'
  | 'cancelled'

export interface PhaseReport {
  command: string
  exitCode: number | null
  timedOut: boolean
  oomKilled: boolean
  cancelled: boolean
  durationMs: number
  cpuSeconds: number | null
  peakMemoryBytes: number | null
  logBytes: number
  logTruncated: boolean
  error?: string
}

export interface Report {
  schemaVersion: typeof SCHEMA_VERSION
  runId: string
  outcome: Outcome
  outcomeReason: string
  startedAt: string
  finishedAt: string
  repo: { path: string; ref: string; baseSha: string | null; headSha: string | null }
  image: {
    ref: string | null
    id: string | null
    baseDigests: string[]
    dockerfileSha256: string | null
    cached: boolean
    /** Pulled from a registry in this run, built in this run, or found on the engine (cache). */
    source?: 'pulled' | 'built' | 'cache'
    /** The preset image its release published (images/published.json), and whether it was used. */
    published?: PublishedImageUse & {
      attestation?: { status: 'verified' | 'skipped'; detail: string }
    }
    warnings: string[]
    /** The agent image across machines (docs/setup.md): restored from or saved to the cache. */
    cache?: CacheUse
  }
  task: {
    sha256: string
    bytes: number
    source: 'text' | 'file'
    /** The task's text, cut to 4,000 characters (task.md in the artifact has all of it). */
    text?: string
    truncated?: boolean
    /** Where the task text came from (a task file is read at the base commit). */
    origin?: TaskOrigin
  }
  /**
   * A local run (`airlock run`): there is no pull request and no gate, so the review's next step is
   * a local one. Absent on a runner.
   */
  local?: true
  /** A follow-up run: the earlier run it continues (its review is superseded by this one). */
  continuation?: ContinuationRecord
  agent: PhaseReport & {
    promptSha256: string
    model: string | null
    preset?: string
    /**
     * The agent's answer (docs/agent-output.md): summary.md, else its CLI's final message, else
     * the model's last reply in the transcript; capped, masked, untrusted text.
     */
    message?: AgentAnswer
    /** Why summary.md was not taken when it was there (a symlink, not a file…). */
    messageNote?: string
  }
  /** The agent's findings about lines (/airlock/out/review.json), when it wrote any. */
  findings?: FindingsRecord
  /**
   * The threat review of the diff (docs/report.md): findings of the deterministic rules, and a
   * verdict bound to the diff it judged. Absent when the run ended before its diff was captured.
   */
  threatReview?: ThreatReviewRecord
  tests: {
    command: string | null
    phase: PhaseReport | null
    summary: TestSummary
    cases: TestCase[]
    sources: TestReportSource[]
    /** With `compare-base`: the same tests on the unchanged tree, and what the change did to each. */
    baseline: { phase: PhaseReport; summary: TestSummary; cases: TestCase[] } | null
    comparison: Comparison | null
    /** When the tests failed: the one re-run of the test command, and the tests it found flaky. */
    rerun: { phase: PhaseReport; flaky: string[] } | null
    /**
     * The tree the tests saw: a fresh checkout of the diff's result tree plus `installOutput`
     * entries the install phase left outside the tree (nothing else of the agent's workspace).
     */
    workspace?: { tree: string; installOutput: number }
    /**
     * Causes the evidence names besides the change (docs/report.md): the same failure on the base
     * tree, a network error in a phase without network, an install that failed first.
     */
    diagnosis?: TestsDiagnosis[]
  }
  /** The sandbox's settings: the plan's, or as the engine applied them (`source`). `runtime` is the agent container's. */
  sandbox: Pick<
    AppliedSettings,
    'runtime' | 'network' | 'user' | 'readOnlyRootfs' | 'capDrop' | 'noNewPrivileges' | 'init'
  > & {
    /**
     * Why the runtime differs from the one asked for, or why the run's containers use different
     * gVisor entries (runsc without a network, runsc-net for those that need one).
     */
    runtimeNote?: string
    memory: number
    cpus: number
    pidsLimit: number
    /**
     * `workspace-size`: the filesystem holding what the sandbox writes; `enforced` false when this
     * runner could not mount it (then nothing bounded it); `full` when a phase wrote up to it.
     */
    workspace?: { sizeBytes: number; enforced: boolean; full: boolean }
    /** Whether these values were read back from the container (`inspect`) or are the plan's. */
    source: 'inspect' | 'plan'
    applied: AppliedSettings | null
  }
  /**
   * The captured diff (src/evidence/capture.ts); before a capture, no hash and no trees.
   * `ignored` is optional: reports written before this field existed have none.
   */
  diff: Omit<DiffRecord, 'sha256' | 'ignored' | 'baseTree' | 'resultTree'> & {
    sha256: string | null
    ignored?: DiffRecord['ignored']
    baseTree: string | null
    resultTree: string | null
  }
  policy: {
    allowedPaths: string[]
    protectedPaths: string[]
    /** Any violation makes the outcome policy-violation. */
    violations: PolicyFinding[]
    /** Changes to protected paths, for an explicit approval. */
    protected: PolicyFinding[]
    /** Which policy file applied: its blob SHA at the base commit (null: none there / no base). */
    source: PolicyRecord
  }
  /** SHA-256 of every lockfile in the result tree. */
  dependencies: DependencyFile[]
  runner: RunnerFacts | null
  cost: {
    wallMs: number
    cpuSeconds: number | null
    peakMemoryBytes: number | null
    /**
     * Model tokens: counted by the egress proxy from the transcript of credential routes when they
     * ran (measured), otherwise as the agent reported them in usage.json (its claims).
     */
    tokens: TokenUsage | null
    /** The agent's own claim of its cost in US dollars (usage.json or its CLI's report). */
    usd: number | null
    /** Where `usd` comes from. */
    usdSource?: 'usage.json' | 'cli'
    /** The cost estimated from the measured tokens and the price table (docs/cost.md). */
    estimate?: CostEstimate | null
    usageFile: Omit<UsageRead, 'usage'>
    /** How long the run's own steps took (ms): see RunSteps. */
    steps?: RunSteps
  }
  egress: EgressSummary
  env: string[]
  /** The install phase (`setup-command`), when the run had one. */
  setup?: SetupReport
  /** Service containers of the test phases, one entry per service and phase. */
  services?: ServiceReport[]
  /** With `isolation`: the requested tier, the one used and why. */
  isolation?: IsolationDecision
}

export type { TokenUsage }

/** The install phase (`setup-command`, docs/setup.md). */

export interface SetupReport {
  /** The dependency cache mounted into the install phase (docs/setup.md). */
  cache?: CacheUse
  command: string
  phase: PhaseReport
  presets: string[]
  /** The host rules the install could reach (through the proxy); empty: no network. */
  allowHosts: string[]
  egress: SetupEgress | null
  lockfiles: LockfileHashes[]
  /**
   * The dependency tree the install resolved, read from what it left in the workspace (npm's
   * hidden lockfile, Python's installed distributions): hashed and listed, lockfile or not.
   * Optional: reports written before this field existed have none.
   */
  resolved?: ResolvedTrees
  /** Tracked files the install changed (they show in the diff too; not the agent's doing). */
  changedFiles: string[]
  changedTotal: number
}

export function emptyPhase(command: string): PhaseReport {
  return {
    command,
    exitCode: null,
    timedOut: false,
    oomKilled: false,
    cancelled: false,
    durationMs: 0,
    cpuSeconds: null,
    peakMemoryBytes: null,
    logBytes: 0,
    logTruncated: false
  }
}

/**
 * How long the run's own steps took (ms). Steps that run alongside each other (resolve, image,
 * scratch and workspace) overlap: `beforeAgentMs` is what they cost the run together.
 */
export interface RunSteps {
  /** From the process's start to the pipeline's (Node's start, loading the code, reading inputs). */
  startupMs?: number
  /** The engine's facts and the runtime check. */
  resolveMs?: number
  /** Resolving or building the agent image. */
  imageMs?: number
  /** Making and mounting the scratch filesystem. */
  scratchMs?: number
  /** Writing the workspace from git's objects. */
  workspaceMs?: number
  /** Starting the egress proxy. */
  proxyStartMs?: number
  /** From the pipeline's start to the agent phase's start: the fixed cost before the agent. */
  beforeAgentMs?: number
  /** Capturing the diff. */
  diffMs?: number
  /** The secret scan of the outputs before report.json is written. */
  scanMs?: number
  /** The threat review of the diff. */
  threatReviewMs?: number
}
