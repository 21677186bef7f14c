// The context inputs are read in when nothing is given: the Actions environment or this machine.
import * as os from 'node:os'
import { LOCAL_EVENT, readRunEvent } from '../event.js'
import type { RunEvent } from '../event.js'
import type { InputContext } from '../inputs.js'

/**
 * The workspace, environment, event, host uid and CPUs, and a run id (GITHUB_RUN_ID-attempt or
 * local). On a runner the event is read here, once; `local` (the CLI) never reads the runner's
 * event, whatever the environment holds.
 */
export function defaultContext(
  env: NodeJS.ProcessEnv,
  where: 'runner' | 'local' = 'runner'
): InputContext {
  const event: RunEvent = where === 'local' ? LOCAL_EVENT : readRunEvent(env)
  const runId =
    (event.run !== undefined ? `${event.run.id}-${event.run.attempt}` : undefined) ??
    `local-${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)}-${Math.random().toString(16).slice(2, 8)}`
  return {
    workspace: env.GITHUB_WORKSPACE ?? process.cwd(),
    environment: env,
    event,
    hostUid: typeof process.getuid === 'function' ? process.getuid() : 1000,
    hostCpus: os.cpus().length,
    defaultRunId: runId
  }
}
