import type { PhasePlan, RunPlan } from '../plan.js'
import { emptyPhase } from './report.js'
import type { Report } from './report.js'

/**
 * The report of a run that has not done anything yet: the plan's settings, nothing measured.
 * The pipeline fills it as it goes; the test fixtures start from it too.
 */
export function emptyReport(plan: RunPlan, started: number = Date.now()): Report {
  const s = plan.sandbox
  const agent = plan.phases.find((p) => p.name === 'agent') as PhasePlan
  const tests = plan.phases.find((p) => p.name === 'tests')
  return {
    schemaVersion: 1,
    runId: plan.runId,
    outcome: 'infrastructure-error',
    outcomeReason: 'the run did not finish',
    startedAt: new Date(started).toISOString(),
    finishedAt: new Date(started).toISOString(),
    repo: { path: plan.repo.path, ref: plan.repo.ref, baseSha: null, headSha: null },
    image: {
      ref: null,
      id: null,
      baseDigests: [],
      dockerfileSha256: null,
      cached: false,
      warnings: []
    },
    task: {
      sha256: plan.task.sha256,
      bytes: plan.task.bytes,
      source: plan.task.source,
      ...(plan.task.origin !== undefined ? { origin: plan.task.origin } : {})
    },
    ...(plan.continuation !== undefined ? { continuation: plan.continuation } : {}),
    agent: {
      ...emptyPhase(agent.command[2] ?? ''),
      promptSha256: plan.task.sha256,
      model: plan.model ?? null,
      ...(plan.preset !== undefined ? { preset: plan.preset } : {})
    },
    tests: {
      command: tests?.command[2] ?? null,
      phase: null,
      summary: { total: 0, passed: 0, failed: 0, skipped: 0 },
      cases: [],
      sources: [],
      baseline: null,
      comparison: null,
      rerun: null
    },
    sandbox: {
      runtime: s.runtime,
      network: s.network,
      user: s.user,
      readOnlyRootfs: s.readOnlyRootfs,
      capDrop: [...s.capDrop],
      noNewPrivileges: s.noNewPrivileges,
      init: s.init,
      memory: s.memoryBytes,
      cpus: s.cpus,
      pidsLimit: s.pidsLimit,
      workspace: { sizeBytes: s.workspace.sizeBytes, enforced: false, full: false },
      source: 'plan',
      applied: null
    },
    diff: {
      sha256: null,
      bytes: 0,
      files: [],
      totalFiles: 0,
      filesInPatch: 0,
      truncated: false,
      truncation: [],
      redacted: false,
      skipped: [],
      baseTree: null,
      resultTree: null
    },
    policy: {
      allowedPaths: plan.policy.allowedPaths,
      protectedPaths: plan.policy.protectedPaths,
      violations: [],
      protected: [],
      source: plan.policyFile
    },
    dependencies: [],
    runner: null,
    cost: {
      wallMs: 0,
      cpuSeconds: null,
      peakMemoryBytes: null,
      tokens: null,
      usd: null,
      usageFile: { status: 'missing' }
    },
    egress: { allowed: 0, denied: 0, deniedHosts: [], transcript: null },
    env: plan.env
  }
}
