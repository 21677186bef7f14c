// The command line, on commander: one subcommand each for run, plan, verify and cleanup, help per
// command with grouped flags and examples, --version, and every parse error turned into a
// ConfigurationError in this tool's words (the flag, what is wrong, the fix, a close match).
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import { ConfigurationError } from '../errors.js'
import { boundedReader } from '../input-bounds.js'
import { AGENT_KEY_ENV } from '../presets/presets.js'
import { CLEANUP_FLAGS, PLAN_FLAGS, RUN_FLAGS } from './flags.js'
import { INPUT_FLAGS } from './input-flags.js'
import type { FlagSpec } from './flags.js'
import { didYouMean } from '../suggest.js'
import { packageVersion } from './version.js'

export const COMMANDS = ['run', 'plan', 'verify', 'cleanup', 'init', 'help'] as const
export type CommandName = (typeof COMMANDS)[number]

/** What the command line asked for: a command with its flags, or a text to print (help, version). */
export type Parsed =
  | {
      command: 'run' | 'plan' | 'verify' | 'cleanup' | 'init'
      values: Record<string, unknown>
      args: string[]
    }
  | { command: 'print'; text: string }

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

const FLAGS_OF: Record<string, FlagSpec[]> = {
  run: [...INPUT_FLAGS, ...RUN_FLAGS],
  plan: [...INPUT_FLAGS, ...PLAN_FLAGS],
  cleanup: CLEANUP_FLAGS,
  init: INIT_FLAGS,
  verify: []
}
const ALL_FLAGS = new Map<string, FlagSpec>(
  Object.values(FLAGS_OF)
    .flat()
    .map((s) => [s.name, s])
)

const EXAMPLES: Record<string, string> = {
  run: `
Examples:
  airlock run --agent claude-code --task .github/airlock/task.md --test-command "npm test"
  airlock run --dockerfile agent/Dockerfile --agent-command "./agent.sh" --task "fix the failing test"
  airlock run --image ghcr.io/acme/agent@sha256:<64 hex> --agent-command "agent" \\
              --network allowlist --allow-hosts api.example.com --task task.md --quiet

Paths (--path, --output-dir, --dockerfile, --build-context, a task file) must stay inside the
current folder. Exit codes: 0 evidence written (read the outcome in report.json) · 1 not success
with --fail-on-outcome · 2 bad input · 3 infrastructure error (evidence so far is still written).
`,
  plan: `
Examples:
  airlock plan --agent claude-code --task task.md --test-command "npm test"
  airlock plan --dockerfile agent/Dockerfile --agent-command ./agent.sh --task task.md --json

Checks everything that needs no Docker engine (flags, paths, the ref, the Dockerfile's FROM lines,
the policy file) and prints what the run would do; runs nothing. With --agent it works without
$${AGENT_KEY_ENV} and says that the run will need it. The same flags as airlock run.
`,
  verify: `
Examples:
  airlock verify airlock-out

Exit codes: 0 every file matches provenance.json · 1 a file is changed, missing, added or not a
regular file, or provenance.json is missing or invalid · 2 DIR is not a folder.
`,
  init: `
Examples:
  npx agent-airlock init                              the default workflows, task and policy
  airlock init --workflows pull-requests,approvals,review-relay
  airlock init --dry-run                              print the files, write nothing

Run it at the root of your repository's checkout. It writes .github/workflows/airlock-*.yml pinned
to this release's full commit SHA, .github/airlock/review-task.md and .github/airlock.yml, never
overwrites a file you changed (--force does), then prints the steps left: the secret
ANTHROPIC_API_KEY and the required check airlock/approval. Exit codes: 0 the files are in place ·
1 a changed file was kept · 2 bad input.
`,
  cleanup: `
Examples:
  airlock cleanup --run-id local-20261129101500-3fa2c1

Removes the run's containers, networks and volumes, and its temporary folders under RUNNER_TEMP
or the system temporary folder. The run id is printed by airlock run and stored in report.json.
`
}

const TOP_HELP_AFTER = `
Examples:
  airlock plan --agent claude-code --task task.md      what a run would do
  airlock run  --agent claude-code --task task.md      run it; evidence in airlock-out/
  airlock verify airlock-out                           check the evidence offline
  airlock egress suggest airlock-out                   the minimal allow-hosts for that run
  npx agent-airlock init                               set up GitHub in this repository
  airlock run --help                                   every flag of run, grouped

Docs: README.md and docs/ in this package (npm explore agent-airlock -- ls docs).
`

function switchValue(name: string): (v: string) => boolean {
  return (v) => {
    if (v === 'true') return true
    if (v === 'false') return false
    throw new InvalidArgumentError(
      `"${v}" is not true or false; write --${name} or --${name}=false`
    )
  }
}

function optionFor(spec: FlagSpec): Option {
  const flags =
    spec.kind === 'switch' ? `--${spec.name} [true|false]` : `--${spec.name} <${spec.value}>`
  const o = new Option(flags, spec.help).helpGroup(spec.group)
  if (spec.kind === 'switch') return o.argParser(switchValue(spec.name))
  if (spec.kind === 'list')
    return o.argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v])
  return o
}

/** The flag names as commander keys them (camelCase) → our names (the input names). */
function attributeNames(specs: FlagSpec[]): Map<string, string> {
  return new Map(specs.map((s) => [optionFor(s).attributeName(), s.name]))
}

function program(out: { text: string }, onCommand: (p: Parsed) => void): Command {
  const configure = (c: Command): Command =>
    c
      .exitOverride()
      .configureOutput({
        writeOut: (s) => {
          out.text += s
        },
        writeErr: () => undefined,
        outputError: () => undefined
      })
      .configureHelp({ helpWidth: 100, showGlobalOptions: false })
      .allowExcessArguments(false)
      .helpOption('-h, --help', 'show this help')
  const root = configure(new Command('airlock'))
    .description(
      'Run an AI coding agent against a repository in a pinned, hardened, network-isolated\nDocker container, and keep all the evidence. Never talks to GitHub (init asks first).'
    )
    .version(packageVersion(), '-V, --version', 'print the version')
    .addHelpText('after', TOP_HELP_AFTER)
    .helpCommand('help [command]', 'show the help of a command')
  const sub = (
    name: 'run' | 'plan' | 'verify' | 'cleanup' | 'init',
    description: string,
    usage: string
  ): Command => {
    const c = configure(root.command(name)).description(description).usage(usage)
    for (const spec of FLAGS_OF[name]) c.addOption(optionFor(spec))
    c.addHelpText('after', EXAMPLES[name])
    const names = attributeNames(FLAGS_OF[name])
    c.action((...a: unknown[]) => {
      const cmd = a[a.length - 1] as Command
      const values: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(cmd.opts())) values[names.get(k) ?? k] = v
      onCommand({ command: name, values, args: cmd.args })
    })
    return c
  }
  sub('run', 'run the agent in the sandbox and write the evidence folder', '[flags]')
  sub('plan', 'check the flags and print what a run would do; runs nothing', '[flags]')
  sub('verify', 'check an output folder against its provenance.json, offline', 'DIR').argument(
    '<DIR>',
    'the output folder of a run'
  )
  sub('cleanup', 'remove what a run left behind', '--run-id ID')
  sub(
    'init',
    "write the GitHub workflows, task and policy into this repository's checkout",
    '[flags]'
  )
  return root
}

/** The help of a command (or the top-level help), as printed by `airlock <command> --help`. */
export function helpText(command?: string): string {
  const out = { text: '' }
  const root = program(out, () => undefined)
  const c = root.commands.find((x) => x.name() === command) ?? root
  return `${c.helpInformation()}${c === root ? TOP_HELP_AFTER : EXAMPLES[c.name()]}\n`
}

/**
 * The command first: `airlock --quiet run` reads as `airlock run --quiet` (flags before the
 * command kept working before commander). Values of flags are skipped, never taken as the command.
 */
function commandFirst(argv: string[]): { argv: string[]; version: boolean } {
  let version = false
  let command: number | undefined
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--') break
    if (a === '--version' || a === '-V') {
      version = true
      continue
    }
    if (a.startsWith('-')) {
      if (a.includes('=')) continue
      const spec = ALL_FLAGS.get(a.replace(/^--?/, ''))
      if (spec === undefined) continue
      const next = argv[i + 1]
      if (
        spec.kind !== 'switch' &&
        next?.startsWith('--') &&
        ALL_FLAGS.has(next.slice(2).split('=')[0])
      )
        throw new ConfigurationError(
          a,
          `needs a value (${spec.value ?? 'VALUE'}) before ${next}: ${a} ${spec.value ?? 'VALUE'}; a value that starts with -- is written ${a}=VALUE`
        )
      if (spec.kind !== 'switch') i++
      else if (argv[i + 1] === 'true' || argv[i + 1] === 'false') i++
      continue
    }
    if (command === undefined) command = i
  }
  if (command === undefined || command === 0) return { argv, version }
  return {
    argv: [argv[command], ...argv.slice(0, command), ...argv.slice(command + 1)],
    version
  }
}

/** Parses the command line; every mistake is a ConfigurationError that names it and the fix. */
export function parse(argv: string[]): Parsed {
  const ordered = commandFirst(argv)
  if (argv.length === 0) return { command: 'print', text: helpText() }
  if (ordered.version) return { command: 'print', text: `${packageVersion()}\n` }
  if (ordered.argv[0] === 'help') {
    const [, topic, ...rest] = ordered.argv
    if (topic === undefined) return { command: 'print', text: helpText() }
    if (!(COMMANDS as readonly string[]).includes(topic))
      throw new ConfigurationError(
        'command',
        `"${topic}" is not a command.${didYouMean(topic, COMMANDS)} Use run, plan, verify, cleanup or init; see airlock --help.`
      )
    if (rest.length > 0)
      throw new ConfigurationError(
        'arguments',
        `unexpected "${rest.join(' ')}": airlock help takes one command`
      )
    return { command: 'print', text: helpText(topic === 'help' ? undefined : topic) }
  }
  const out = { text: '' }
  let parsed: Parsed | undefined
  const root = program(out, (p) => {
    parsed = p
  })
  try {
    root.parse(ordered.argv, { from: 'user' })
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error
    if (error.exitCode === 0) return { command: 'print', text: out.text }
    throw translate(error, ordered.argv)
  }
  if (parsed === undefined) return { command: 'print', text: out.text || helpText() }
  return parsed
}

function translate(error: CommanderError, argv: string[]): ConfigurationError {
  const command = (COMMANDS as readonly string[]).includes(argv[0]) ? argv[0] : undefined
  const where = command !== undefined ? `airlock ${command}` : 'airlock'
  const helpHint = `See ${where} --help.`
  const quoted = /'([^']*)'/.exec(error.message)?.[1] ?? ''
  switch (error.code) {
    case 'commander.unknownOption': {
      const flag = quoted.split('=')[0]
      const known = command !== undefined ? (FLAGS_OF[command] ?? []) : []
      const elsewhere = Object.entries(FLAGS_OF)
        .filter(([c, specs]) => c !== command && specs.some((s) => `--${s.name}` === flag))
        .map(([c]) => `airlock ${c}`)
      if (command === undefined)
        return new ConfigurationError(
          flag,
          `comes before a command; write it after one: airlock run ${flag} …, airlock plan ${flag} …`
        )
      if (elsewhere.length > 0)
        return new ConfigurationError(
          flag,
          `is a flag of ${elsewhere.join(' and ')}, not of ${where}. ${helpHint}`
        )
      return new ConfigurationError(
        flag,
        `is not a flag of ${where}.${didYouMean(
          flag.replace(/^-+/, ''),
          [...known.map((s) => s.name), 'help'],
          '--'
        )} ${helpHint}`
      )
    }
    case 'commander.unknownCommand':
      return new ConfigurationError(
        'command',
        `"${quoted}" is not a command.${didYouMean(quoted, COMMANDS)} Use run, plan, verify, cleanup or init; see airlock --help.`
      )
    case 'commander.optionMissingArgument': {
      const flag = quoted.split(' ')[0]
      const spec = ALL_FLAGS.get(flag.replace(/^--/, ''))
      return new ConfigurationError(
        flag,
        `needs a value (${spec?.value ?? 'VALUE'}): ${flag} ${spec?.value ?? 'VALUE'}. ${helpHint}`
      )
    }
    case 'commander.missingArgument':
      return new ConfigurationError(
        'DIR',
        'is required: the output folder to verify, e.g. airlock verify airlock-out'
      )
    case 'commander.excessArguments': {
      const extra = excess(argv)
      return new ConfigurationError(
        'arguments',
        `unexpected "${extra}": ${where} ${command === 'verify' ? 'takes one folder' : 'takes flags only'}; quote a value that has spaces (--task "fix the bug"). ${helpHint}`
      )
    }
    case 'commander.invalidArgument': {
      // "error: option '--compare-base [true|false]' argument 'x' is invalid. <our text>"
      const flag = quoted.split(' ')[0]
      const reason = error.message.replace(/^[^.]*\. /, '')
      return new ConfigurationError(flag, `${reason}. ${helpHint}`)
    }
    default:
      return new ConfigurationError(
        'arguments',
        `${error.message.replace(/^error: /, '')}. ${helpHint}`
      )
  }
}

/** The positional arguments of a command line beyond the command (and verify's DIR). */
function excess(argv: string[]): string {
  const positional: string[] = []
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--') {
      positional.push(...argv.slice(i + 1))
      break
    }
    if (a.startsWith('-') && a.length > 1) {
      if (a.includes('=')) continue
      const spec = ALL_FLAGS.get(a.replace(/^--?/, ''))
      if (spec !== undefined && spec.kind !== 'switch') i++
      else if (spec !== undefined && (argv[i + 1] === 'true' || argv[i + 1] === 'false')) i++
      continue
    }
    positional.push(a)
  }
  return (argv[0] === 'verify' ? positional.slice(1) : positional).join(' ')
}

/** The flags as an input reader: lists joined by lines, booleans as true/false, empty as absent. */
export function reader(values: Record<string, unknown>): (name: string) => string | undefined {
  return boundedReader((name) => {
    const v = values[name]
    if (v === undefined) return undefined
    if (Array.isArray(v)) return v.length === 0 ? undefined : v.join('\n')
    if (typeof v === 'boolean') return v ? 'true' : 'false'
    const s = String(v)
    return s === '' ? undefined : s
  })
}
