// The run's typed inputs, built once at the edge for the action and the CLI alike: the policy file
// from the base, the pull request's head as the default `ref`, an agent preset's defaults, then
// every input read and checked into one `Inputs`; a task file read at the policy's base.
import type { InputContext, InputReader, Inputs } from '../inputs.js'
import { getInputs } from '../inputs.js'
import { policyForRun } from '../policy/load.js'
import type { ContentsApi } from '../policy/load.js'
import { runInputs } from '../presets/run-inputs.js'
import * as path from 'node:path'
import { taskFromBase } from '../policy/task.js'

export async function readRunInputs(
  read: InputReader,
  ctx: InputContext,
  /** The contents API for the policy file when the base is not in the clone (the action). */
  api?: ContentsApi
): Promise<Inputs> {
  const policy = await policyForRun({
    read,
    workspace: ctx.workspace,
    ...(ctx.event.pullRequest?.baseSha !== undefined
      ? { eventBase: ctx.event.pullRequest.baseSha }
      : {}),
    ...(api !== undefined ? { api } : {})
  })
  const run = await runInputs(read, {
    workspace: ctx.workspace,
    env: ctx.environment,
    event: ctx.event,
    policy: policy.policy.values
  })
  const given = getInputs(run.read, { ...ctx, policy, ...run.context })
  // A task file is read at the base, where the policy is read: never from the pull request.
  const task = await taskFromBase(given.task, {
    workspace: ctx.workspace,
    repoPath: path.resolve(ctx.workspace, given.path),
    policy: policy.record,
    ...(api !== undefined ? { api } : {})
  })
  return { ...given, task }
}
