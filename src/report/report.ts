import type { ChangedFile } from '../evidence/diff.js'
import type { SkippedEntry } from '../evidence/snapshot.js'
import type { TestCase, TestReportSource, TestSummary } from '../evidence/tests.js'
import type { Comparison } from '../evidence/compare.js'
import type { AppliedSettings } from '../sandbox/types.js'
import type { PolicyRecord } from '../policy.js'
import type { EgressSummary } from '../egress/evidence.js'

export const SCHEMA_VERSION = 1

export type Outcome =
  | 'success'
  | 'agent-failed'
  | 'tests-failed'
  | 'timed-out'
  | 'policy-violation'
  | 'infrastructure-error'
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
    warnings: string[]
  }
  task: { sha256: string; bytes: number; source: 'text' | 'file' }
  agent: PhaseReport & { promptSha256: string; model: string | null }
  tests: {
    command: string | null
    phase: PhaseReport | null
    summary: TestSummary
    cases: TestCase[]
    sources: TestReportSource[]
    /** With `compare-base`: the same tests on the unchanged tree, and what the change did to each. */
    baseline: { phase: PhaseReport; summary: TestSummary; cases: TestCase[] } | null
    comparison: Comparison | null
  }
  sandbox: {
    runtime: string
    network: string
    user: string
    readOnlyRootfs: boolean
    capDrop: string[]
    noNewPrivileges: boolean
    init: boolean
    memory: number
    cpus: number
    pidsLimit: number
    /** Whether these values were read back from the container (`inspect`) or are the plan's. */
    source: 'inspect' | 'plan'
    applied: AppliedSettings | null
  }
  diff: {
    sha256: string | null
    bytes: number
    files: ChangedFile[]
    truncated: boolean
    skipped: SkippedEntry[]
    /** git tree ids before and after the agent (in the run's private repository). */
    baseTree: string | null
    resultTree: string | null
  }
  policy: {
    violations: { rule: string; path: string | null; detail: string }[]
    /** Which policy file applied: its blob SHA at the base commit (null: none there / no base). */
    source: PolicyRecord
  }
  cost: {
    wallMs: number
    cpuSeconds: number | null
    peakMemoryBytes: number | null
    /** Model tokens counted from the transcript of credential routes (allowlist mode). */
    tokens: { input: number; output: number } | null
  }
  egress: EgressSummary
  env: string[]
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
