// The commands of the command line and the flags of each (run and plan share the inputs' flags).
import { CLEANUP_FLAGS, PLAN_FLAGS, RUN_FLAGS } from './flags.js'
import { INPUT_FLAGS } from './input-flags.js'
import type { FlagSpec } from './flags.js'

export const COMMANDS = ['run', 'plan', 'verify', 'cleanup', 'init', 'help'] as const
export type CommandName = (typeof COMMANDS)[number]

const INIT_GROUP = 'Init:'
/** `airlock init`'s flags (src/cli/init.ts). */
const INIT_FLAGS: FlagSpec[] = [
  {
    name: 'workflows',
    value: 'LIST',
    kind: 'value',
    group: INIT_GROUP,
    help: 'comma list of pull-requests, approvals, review-relay, comments, forks (default: all of them)'
  },
  {
    name: 'dry-run',
    kind: 'switch',
    group: INIT_GROUP,
    help: 'print the files and what would happen to each; write nothing'
  },
  {
    name: 'force',
    kind: 'switch',
    group: INIT_GROUP,
    help: 'overwrite files that differ from what init writes'
  },
  {
    name: 'repository',
    value: 'OWNER/NAME',
    kind: 'value',
    group: INIT_GROUP,
    help: "Agent Airlock's repository to pin (default: the release this package is)"
  },
  {
    name: 'ref',
    value: 'SHA',
    kind: 'value',
    group: INIT_GROUP,
    help: "full commit SHA of the Agent Airlock release to pin (default: this package's)"
  },
  {
    name: 'tag',
    value: 'vX.Y.Z',
    kind: 'value',
    group: INIT_GROUP,
    help: "the release's tag, written next to the SHA (default: this package's)"
  }
]

/** The flags of each command. */
export const FLAGS_OF: Record<string, FlagSpec[]> = {
  run: [...INPUT_FLAGS, ...RUN_FLAGS],
  plan: [...INPUT_FLAGS, ...PLAN_FLAGS],
  cleanup: CLEANUP_FLAGS,
  init: INIT_FLAGS,
  verify: []
}
export const ALL_FLAGS = new Map<string, FlagSpec>(
  Object.values(FLAGS_OF)
    .flat()
    .map((s) => [s.name, s])
)
