// The agent stage: the agent phase inside the egress session (when the plan has one), and what
// the run learns from it: its phase record, its answer, its findings and its model use.
import * as path from 'node:path'
import { readAnswer } from '../evidence/answer.js'
import type { AnswerRead } from '../evidence/answer.js'
import { readFindings } from '../evidence/findings.js'
import type { FindingsRecord } from '../evidence/findings.js'
import { readUsage } from '../evidence/metadata.js'
import type { UsageRead } from '../evidence/metadata.js'
import type { PhasePlan } from '../plan.js'
import { OUTPUT_FILES } from '../report/output.js'
import type { Scratch } from '../workspace/bounded.js'
import type { Workspace } from '../workspace/workspace.js'
import { runPhase, sandboxFolder } from './phase.js'
import type { PhaseContext, PhaseRun } from './phase.js'
import type { EgressRoute } from './egress.js'

/**
 * What the agent stage returns: its phase, what it said about its model use (usage.json), its
 * answer and its findings about lines.
 */
export interface AgentRecord {
  run: PhaseRun
  usage: UsageRead
  answer: AnswerRead
  findings: FindingsRecord | null
}

/**
 * Runs the agent phase, in the egress session when the plan has one (the pipeline opens the
 * session before and stops it after: `route` is how the agent's container reaches its proxy).
 */
export async function runAgent(
  ctx: PhaseContext,
  agentPhase: PhasePlan,
  ws: Workspace,
  scratch: Scratch,
  route: EgressRoute | undefined
): Promise<AgentRecord> {
  const { plan } = ctx
  // The agent's own folder for files about the run (usage.json): outside the workspace and diff.
  const agentOut = await sandboxFolder(plan, path.join(scratch.dir, 'out'))
  const run = await runPhase(ctx, agentPhase, ws.dir, OUTPUT_FILES.agentLog, {
    outDir: agentOut,
    ...(route ? { egress: route } : {})
  })
  const answer = await readAnswer({
    agentOut,
    agentLog: path.join(plan.outputDir, OUTPUT_FILES.agentLog),
    transcript: path.join(plan.outputDir, OUTPUT_FILES.transcript)
  })
  return {
    run,
    usage: await readUsage(agentOut),
    answer,
    findings: await readFindings(agentOut)
  }
}
