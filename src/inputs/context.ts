// The context inputs are read in when nothing is given: the Actions environment or this machine.
import * as os from 'node:os'
import type { InputContext } from '../inputs.js'

/** The workspace, environment, host uid and CPUs, and a run id (GITHUB_RUN_ID-attempt or local). */
export function defaultContext(env: NodeJS.ProcessEnv = process.env): InputContext {
  const runId =
    env.GITHUB_RUN_ID !== undefined
      ? `${env.GITHUB_RUN_ID}-${env.GITHUB_RUN_ATTEMPT ?? '1'}`
      : `local-${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)}-${Math.random().toString(16).slice(2, 8)}`
  return {
    workspace: env.GITHUB_WORKSPACE ?? process.cwd(),
    environment: env,
    hostUid: typeof process.getuid === 'function' ? process.getuid() : 1000,
    hostCpus: os.cpus().length,
    defaultRunId: runId
  }
}
