// The report, assembled once from what the stages returned. The stages hand back typed records;
// the pipeline keeps them in `RunRecords` as they arrive (so a run that fails, times out or is
// cancelled keeps what it learned); `assembleReport` is the one function that builds report.json
// from them — at the end of the run, and at the moment a run is cancelled.
import { CancelledError } from '../errors.js'
import type { DiffCapture } from '../evidence/capture.js'
import { phaseTotals, tokenUsage } from '../evidence/cost.js'
import { installFailedDiagnosis } from '../evidence/diagnosis.js'
import { lockfileFindings } from '../evidence/lockfiles.js'
import type { RunnerFacts } from '../evidence/metadata.js'
import type { PolicyFinding } from '../evidence/path-policy.js'
import type { EgressSummary } from '../egress/evidence.js'
import type { RunPlan } from '../plan.js'
import { estimateCost } from '../prices.js'
import { emptyReport } from '../report/empty.js'
import type { PhaseReport, Report, RunSteps } from '../report/report.js'
import { formatSize } from '../workspace/bounded.js'
import type { Scratch } from '../workspace/bounded.js'
import type { Workspace } from '../workspace/workspace.js'
import type { ThreatStage } from './threat-review.js'
import type { AgentRecord } from './agent.js'
import type { RunImage } from './image.js'
import { classifyOutcome } from './outcome.js'
import type { PhaseOutcomes } from './outcome.js'
import type { ResolvedPlan } from './resolve.js'
import type { InstallRecord } from './setup.js'
import type { BaselineRecord, TestsStageRecord } from './tests.js'

/** The task's text kept in report.json (the review shows it). */
const MAX_TASK_CHARS = 4000

/** What each stage of the run returned, kept as it arrives; absent: the stage did not finish. */
export interface RunRecords {
  startedAt: number
  /** A local run (the CLI): no pull request and no gate. */
  local: boolean
  /** The task as the review shows it (cut; task.md in the output folder has all of it). */
  task: { text: string; truncated: boolean }
  /** How long the run's own steps took. */
  steps: RunSteps
  resolved?: ResolvedPlan
  runner?: RunnerFacts
  image?: RunImage
  /** The scratch filesystem of `workspace-size` (released when the run ends). */
  scratch?: Scratch
  /** A phase filled the scratch filesystem (writes past `workspace-size` failed). */
  scratchFull: boolean
  workspace?: Workspace
  install?: InstallRecord
  baseline?: BaselineRecord
  agent?: AgentRecord
  /** The proxy's summary, once it stopped. */
  egress?: EgressSummary
  capture?: DiffCapture
  threatReview?: ThreatStage
  tests?: TestsStageRecord
}

/** The records of a run that has done nothing yet. */
export function startRecords(
  task: string,
  startupMs: number | undefined,
  local: boolean
): RunRecords {
  const chars = [...task]
  return {
    startedAt: Date.now(),
    local,
    task: {
      text: chars.slice(0, MAX_TASK_CHARS).join(''),
      truncated: chars.length > MAX_TASK_CHARS
    },
    steps: startupMs !== undefined ? { startupMs: Math.round(startupMs) } : {},
    scratchFull: false
  }
}

/** How the run ended: the error that ended it early (if any), and when. */
export interface RunEnd {
  error?: unknown
  finishedAt: number
}

/** report.json from the plan and the stages' records: the one place the report is written. */
export function assembleReport(plan: RunPlan, records: RunRecords, end: RunEnd): Report {
  const r = records
  const empty = emptyReport(plan, r.startedAt)
  const { capture, agent, install, resolved } = r
  const setup = install?.setup && capture ? withLockfiles(install.setup, capture) : undefined
  const violations = [
    ...fullScratch(r),
    ...(capture?.violations ?? []),
    // threat-review: block and a malicious verdict.
    ...(r.threatReview?.violations ?? [])
  ]
  const classified = classifyOutcome(phaseOutcomes(plan, r), violations, end.error)
  const report: Report = {
    ...empty,
    outcome: classified.outcome,
    outcomeReason: classified.reason,
    finishedAt: new Date(end.finishedAt).toISOString(),
    repo: { ...empty.repo, headSha: r.workspace?.commit ?? null },
    image: r.image ? imageRecord(r.image) : empty.image,
    task: { ...empty.task, text: r.task.text, ...(r.task.truncated ? { truncated: true } : {}) },
    agent: agent ? agentRecord(empty.agent, agent, r.egress) : empty.agent,
    tests: testsRecord(plan, empty.tests, r),
    sandbox: {
      ...empty.sandbox,
      // The agent's container: without a network it keeps gVisor's entry without one (resolve.ts).
      runtime: resolved ? agentRuntime(resolved) : empty.sandbox.runtime,
      ...(resolved && runtimeNote(resolved) !== null
        ? { runtimeNote: runtimeNote(resolved) as string }
        : {}),
      ...(r.scratch
        ? {
            workspace: {
              sizeBytes: r.scratch.sizeBytes,
              enforced: r.scratch.enforced,
              full: r.scratchFull
            }
          }
        : {}),
      ...(agent?.run.result.applied ? { applied: agent.run.result.applied, source: 'inspect' } : {})
    },
    ...(capture ? { diff: capture.diff, dependencies: capture.dependencies } : {}),
    policy: {
      ...empty.policy,
      violations: [...violations, ...classified.violations],
      protected: [...(capture?.protected ?? []), ...(setup?.findings ?? [])]
    },
    runner: r.runner ?? null,
    egress: r.egress ?? empty.egress,
    cost: {
      ...empty.cost,
      ...(agent ? agentCost(agent, r.egress) : {}),
      wallMs: end.finishedAt - r.startedAt,
      steps: r.steps
    },
    ...(resolved?.resolution.isolation ? { isolation: resolved.resolution.isolation } : {}),
    ...(setup ? { setup: setup.record } : install ? { setup: install.setup } : {}),
    ...(services(r).length > 0 ? { services: services(r) } : {}),
    ...(agent?.findings ? { findings: agent.findings } : {}),
    ...(r.threatReview ? { threatReview: r.threatReview.record } : {}),
    ...(r.local ? { local: true as const } : {})
  }
  Object.assign(report.cost, phaseTotals(phasesRun(report)))
  return report
}

/** What the phases did, as the outcome's classification reads it. */
function phaseOutcomes(plan: RunPlan, r: RunRecords): PhaseOutcomes {
  const agentPhase = plan.phases.find((p) => p.name === 'agent')
  return {
    testsConfigured: plan.phases.some((p) => p.name === 'tests'),
    ...(r.agent && agentPhase
      ? {
          agent: {
            ...r.agent.run.result,
            timeoutMs: agentPhase.timeoutMs,
            memoryBytes: plan.sandbox.memoryBytes
          }
        }
      : {}),
    ...(r.tests?.ran ? { tests: r.tests.ran.outcome } : {})
  }
}

/** A phase filled the scratch filesystem: a policy violation naming the limit, once. */
function fullScratch(r: RunRecords): PolicyFinding[] {
  if (!r.scratchFull || !r.scratch) return []
  return [
    {
      rule: 'workspace-size',
      path: null,
      detail: `the sandbox filled the workspace limit of ${formatSize(r.scratch.sizeBytes)} (workspace-size); writes past it failed with "No space left on device"`
    }
  ]
}

function imageRecord(image: RunImage): Report['image'] {
  return {
    ref: image.ref,
    id: image.id,
    baseDigests: image.baseDigests,
    dockerfileSha256: image.dockerfileSha256 ?? null,
    cached: image.cached,
    source: image.source ?? (image.cached ? 'cache' : 'built'),
    ...(image.published
      ? {
          published: {
            ...image.published,
            ...(image.attestation ? { attestation: image.attestation } : {})
          }
        }
      : {}),
    warnings: image.warnings,
    ...(image.cacheUse ? { cache: image.cacheUse } : {})
  }
}

/** The agent's phase and what it said (its answer, the model the proxy saw when it named none). */
function agentRecord(
  empty: Report['agent'],
  agent: AgentRecord,
  egress: EgressSummary | undefined
): Report['agent'] {
  const record = { ...empty, ...agent.run.report }
  const measured = egress?.transcript
  return {
    ...record,
    ...(agent.answer.answer ? { message: agent.answer.answer } : {}),
    ...(agent.answer.note !== undefined ? { messageNote: agent.answer.note } : {}),
    ...(measured && record.model === null && measured.models.length > 0
      ? { model: measured.models.join(', ') }
      : {})
  }
}

/** The agent's model use: what the proxy measured, what the agent claimed, the estimate. */
function agentCost(agent: AgentRecord, egress: EgressSummary | undefined): Partial<Report['cost']> {
  const { usage } = agent
  const measured = egress?.transcript ?? null
  // The agent's own claim of its cost: usage.json, else what its CLI reported.
  const claimed = usage.usage?.costUsd
  const cliCost = agent.answer.cli.costUsd
  return {
    usageFile: {
      status: usage.status,
      ...(usage.detail !== undefined ? { detail: usage.detail } : {})
    },
    // What the agent said about its model use (usage.json), below what the proxy measured.
    tokens: tokenUsage(measured, usage.usage),
    ...(claimed !== undefined
      ? { usd: claimed, usdSource: 'usage.json' as const }
      : cliCost !== null
        ? { usd: cliCost, usdSource: 'cli' as const }
        : {}),
    estimate: estimateCost(measured)
  }
}

/** The install's record with the lockfiles it changed, weighed against the diff's. */
function withLockfiles(
  setup: NonNullable<Report['setup']>,
  capture: DiffCapture
): { record: NonNullable<Report['setup']>; findings: PolicyFinding[] } {
  const { lockfiles, findings } = lockfileFindings(setup, capture.dependencies)
  return { record: { ...setup, lockfiles }, findings }
}

/** The baseline, the tests and their re-run; why they did not run, when the install failed. */
function testsRecord(plan: RunPlan, empty: Report['tests'], r: RunRecords): Report['tests'] {
  const stop = r.install?.stop
  const installFailed =
    stop !== undefined &&
    !(stop instanceof CancelledError) &&
    plan.phases.some((p) => p.name === 'tests')
  return {
    ...empty,
    ...(r.baseline?.baseline ? { baseline: r.baseline.baseline } : {}),
    ...(installFailed ? { diagnosis: [installFailedDiagnosis(stop.message)] } : {}),
    ...(r.tests?.ran?.tests ?? {})
  }
}

/** The service containers of the test phases, in the order they started. */
function services(r: RunRecords): NonNullable<Report['services']> {
  return [...(r.baseline?.services ?? []), ...(r.tests?.services ?? [])]
}

function phasesRun(report: Report): PhaseReport[] {
  return [
    report.setup?.phase ?? null,
    report.tests.baseline?.phase ?? null,
    report.agent,
    report.tests.phase,
    report.tests.rerun?.phase ?? null
  ].filter((p): p is PhaseReport => p !== null)
}

/** The OCI runtime of the agent's container. */
function agentRuntime(r: ResolvedPlan): string {
  return r.sandbox.network === 'none'
    ? (r.sandbox.offlineRuntime ?? r.sandbox.runtime)
    : r.sandbox.runtime
}

/** Why the agent's runtime is not the one named, or why the containers use two gVisor entries. */
function runtimeNote(r: ResolvedPlan): string | null {
  const { isolation, note } = r.resolution
  if (note !== null) return note
  if (r.sandbox.offlineRuntime !== undefined && isolation !== null)
    return isolation.reasons[isolation.reasons.length - 1] ?? null
  return null
}
