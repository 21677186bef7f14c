// The agent stage: the agent phase inside the egress session (when the plan has one), and what
// the run learns from it: its phase record, the proxy's evidence and the model use.
import * as path from 'node:path'
import type { EgressSummary } from '../egress/evidence.js'
import type { EgressSecrets } from '../egress/plan.js'
import { readAnswer } from '../evidence/answer.js'
import type { AnswerRead } from '../evidence/answer.js'
import { readFindings } from '../evidence/findings.js'
import type { FindingsRecord } from '../evidence/findings.js'
import { readUsage } from '../evidence/metadata.js'
import type { UsageRead } from '../evidence/metadata.js'
import type { Logger } from '../log.js'
import type { PhasePlan } from '../plan.js'
import { OUTPUT_FILES } from '../report/output.js'
import type { Scratch } from '../workspace/bounded.js'
import type { Workspace } from '../workspace/workspace.js'
import { closeEgress } from './egress.js'
import type { EgressSession } from '../egress/session.js'
import { runPhase, sandboxFolder } from './phase.js'
import type { PhaseContext, PhaseRun } from './phase.js'

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
 * Runs the agent phase (in the egress session when the plan has one: opened by the pipeline
 * beforehand, closed here). The proxy's summary is handed to `onEgress` as soon as the proxy
 * stops, also when the phase failed, so the evidence keeps it whatever happens next.
 */
export async function runAgent(
  ctx: PhaseContext,
  agentPhase: PhasePlan,
  ws: Workspace,
  scratch: Scratch,
  egress: EgressSession | undefined,
  egressSecrets: EgressSecrets | undefined,
  onEgress: (summary: EgressSummary) => void,
  deps: { log: Logger }
): Promise<AgentRecord> {
  const { plan } = ctx
  let run: PhaseRun
  // The agent's own folder for files about the run (usage.json): outside the workspace and diff.
  let agentOut: string
  try {
    agentOut = await sandboxFolder(plan, path.join(scratch.dir, 'out'))
    run = await runPhase(ctx, agentPhase, ws.dir, OUTPUT_FILES.agentLog, {
      outDir: agentOut,
      ...(egress ? { egress: { network: egress.network, env: egress.env } } : {})
    })
  } finally {
    if (egress) onEgress(await closeEgress(egress, plan, egressSecrets, deps.log))
  }
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
