// The scratch filesystem of workspace-size: every folder the sandbox writes lives on it, and a
// phase that filled it is a policy violation.
import type { Report } from '../report/report.js'
import type { Logger } from '../log.js'
import type { RunPlan } from '../plan.js'
import { formatSize, makeScratch } from '../workspace/bounded.js'
import type { Scratch } from '../workspace/bounded.js'

/**
 * A phase that filled the scratch filesystem hit the `workspace-size` limit (writes past it got
 * ENOSPC): a policy violation naming the limit, recorded once.
 */
export async function checkFull(
  scratch: Scratch,
  report: Report,
  /** Already known (the stage asked before removing what it wrote). */
  full?: boolean
): Promise<void> {
  if (report.sandbox.workspace?.full === true || !(full ?? (await scratch.full()))) return
  report.sandbox.workspace = {
    sizeBytes: scratch.sizeBytes,
    enforced: scratch.enforced,
    full: true
  }
  report.policy.violations.push({
    rule: 'workspace-size',
    path: null,
    detail: `the sandbox filled the workspace limit of ${formatSize(scratch.sizeBytes)} (workspace-size); writes past it failed with "No space left on device"`
  })
}

/** The run's scratch filesystem under `tmp`, recorded in the report. */
export async function openScratch(
  tmp: string,
  plan: RunPlan,
  report: Report,
  log: Logger
): Promise<Scratch> {
  const scratch = await makeScratch(tmp, plan.sandbox.workspace, (l) => log.warn(l))
  report.sandbox.workspace = {
    sizeBytes: scratch.sizeBytes,
    enforced: scratch.enforced,
    full: false
  }
  return scratch
}
