import type { Inputs } from '../src/inputs.js'
import { NO_POLICY } from '../src/policy/policy-file.js'
import { planRun } from '../src/plan.js'
import type { RunPlan } from '../src/plan.js'

/** A plan as `planRun` makes it from typical inputs (no filesystem access). */
export function fixturePlan(overrides: Partial<Inputs> = {}): RunPlan {
  return planRun({
    path: '.',
    ref: 'HEAD',
    outputDir: 'airlock-out',
    dockerfile: 'Dockerfile',
    buildContext: '.',
    buildArgs: {},
    allowUnpinnedBase: false,
    agentCommand: 'agent',
    task: { text: 'task', source: 'text' },
    network: 'none',
    runtime: 'runc',
    timeoutMinutes: 30,
    graceSeconds: 10,
    memoryBytes: 2 * 1024 ** 3,
    cpus: 2,
    pidsLimit: 512,
    workspace: { sizeBytes: 4 * 1024 ** 3, required: false },
    user: '1000:1000',
    env: [],
    testReports: [],
    compareBase: false,
    maxLogBytes: 5 * 1024 * 1024,
    allowedPaths: [],
    protectedPaths: [],
    maxChangedFiles: 2000,
    maxDiffBytes: 20 * 1024 * 1024,
    threatReview: 'acknowledge',
    dryRun: false,
    runId: 'r1',
    artifactName: 'airlock-r1',
    policy: NO_POLICY.record,
    ...overrides
  })
}
