// The agent stage: the agent phase inside the egress session (when the plan has one), and what
// the run learns from it: its phase report, the proxy's evidence and the model use.
import * as path from 'node:path'
import type { EgressSecrets } from '../egress/plan.js'
import { tokenUsage } from '../evidence/cost.js'
import { readUsage } from '../evidence/metadata.js'
import type { Logger } from '../log.js'
import type { PhasePlan } from '../plan.js'
import { OUTPUT_FILES } from '../report/output.js'
import type { Report } from '../report/report.js'
import type { Runtime } from '../sandbox/types.js'
import type { Scratch } from '../workspace/bounded.js'
import type { Workspace } from '../workspace/workspace.js'
import { closeEgress, openEgress } from './egress.js'
import type { PhaseOutcomes } from './outcome.js'
import { runPhase, sandboxFolder } from './phase.js'
import type { PhaseContext, PhaseRun } from './phase.js'
import { checkFull } from './scratch.js'

export async function runAgent(
  ctx: PhaseContext,
  agentPhase: PhasePlan,
  ws: Workspace,
  egressSecrets: EgressSecrets | undefined,
  scratch: Scratch,
  report: Report,
  phases: PhaseOutcomes,
  deps: { runtime: Runtime; log: Logger; proxyScript?: string }
): Promise<PhaseRun> {
  const { plan } = ctx
  // The agent's own folder for files about the run (usage.json): outside the workspace and diff.
  const agentOut = await sandboxFolder(plan, path.join(scratch.dir, 'out'))
  const egress = await openEgress(plan, egressSecrets, deps)
  let agent: PhaseRun
  try {
    agent = await runPhase(ctx, agentPhase, ws.dir, OUTPUT_FILES.agentLog, {
      outDir: agentOut,
      ...(egress ? { egress: { network: egress.network, env: egress.env } } : {})
    })
  } finally {
    if (egress) report.egress = await closeEgress(egress, plan, egressSecrets, deps.log)
  }
  Object.assign(report.agent, agent.report)
  phases.agent = {
    ...agent.result,
    timeoutMs: agentPhase.timeoutMs,
    memoryBytes: plan.sandbox.memoryBytes
  }
  await checkFull(scratch, report)
  await recordUsage(report, agentOut)
  if (agent.result.applied) {
    report.sandbox.applied = agent.result.applied
    report.sandbox.source = 'inspect'
  }
  return agent
}

/** What the agent said about its model use (usage.json), below what the proxy measured. */
async function recordUsage(report: Report, agentOut: string): Promise<void> {
  const usage = await readUsage(agentOut)
  report.cost.usageFile = {
    status: usage.status,
    ...(usage.detail !== undefined ? { detail: usage.detail } : {})
  }
  const measured = report.egress.transcript
  report.cost.tokens = tokenUsage(measured, usage.usage)
  if (usage.usage) report.cost.usd = usage.usage.costUsd ?? null
  if (measured && report.agent.model === null && measured.models.length > 0)
    report.agent.model = measured.models.join(', ')
}
