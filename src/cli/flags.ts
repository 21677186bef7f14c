// The flags of the CLI's commands, grouped for the help, with the value's shape and whether it
// repeats or is a switch: the commands' own flags here, the action's inputs in input-flags.ts.
import { INPUT } from '../input-names.js'

export type FlagKind = 'value' | 'list' | 'switch'

export interface FlagSpec {
  name: string
  /** Shape of the value in the help (none for a switch). */
  value?: string
  kind: FlagKind
  group: string
  help: string
}

export const GROUPS = {
  repo: 'Repository and evidence (paths must stay inside the current folder):',
  agent: 'Agent and image:',
  task: 'Task:',
  setup: 'Install phase (docs/setup.md):',
  tests: 'Tests:',
  network: 'Network (docs/egress.md):',
  sandbox: 'Sandbox and limits:',
  review: 'What the agent may change:',
  run: 'Output of this command:',
  action: 'Accepted for the action, no effect on this machine:'
} as const

/** One flag of the table. */
export const f = (
  name: string,
  kind: FlagKind,
  group: string,
  value: string | undefined,
  help: string
): FlagSpec => ({ name, kind, group, help, ...(value !== undefined ? { value } : {}) })

/** Flags of `airlock run` only. */
export const RUN_FLAGS: FlagSpec[] = [
  f('fail-on-outcome', 'switch', GROUPS.run, undefined, 'exit 1 when the outcome is not success'),
  f(
    'quiet',
    'switch',
    GROUPS.run,
    undefined,
    "one line per phase: the sandbox's output is not echoed"
  )
]

/** Flags of `airlock plan` only. */
export const PLAN_FLAGS: FlagSpec[] = [
  f('json', 'switch', GROUPS.run, undefined, 'print the whole RunPlan as JSON instead of a summary')
]

/** Flags of `airlock cleanup`. */
export const CLEANUP_FLAGS: FlagSpec[] = [
  f(
    INPUT.runId,
    'value',
    GROUPS.run,
    'ID',
    'the run to clean up (required; letters, digits, . _ -)'
  ),
  f('json', 'switch', GROUPS.run, undefined, 'print what was removed as JSON')
]
