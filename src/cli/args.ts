// The command line, on commander: one subcommand each for run, plan, verify and cleanup, help per
// command with grouped flags and examples, --version, and every parse error turned into a
// ConfigurationError in this tool's words (the flag, what is wrong, the fix, a close match).
// The commands and their flags are in cli/command-flags.ts, the examples in cli/help-text.ts, the
// parse errors in cli/parse-errors.ts.
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import { ConfigurationError } from '../errors.js'
import { boundedReader } from '../input-bounds.js'
import type { FlagSpec } from './flags.js'
import { didYouMean } from '../suggest.js'
import { ALL_FLAGS, COMMANDS, FLAGS_OF } from './command-flags.js'
import { EXAMPLES, TOP_HELP_AFTER } from './help-text.js'
import { translate } from './parse-errors.js'
import { packageVersion } from './version.js'

export { COMMANDS } from './command-flags.js'
export type { CommandName } from './command-flags.js'

/** What the command line asked for: a command with its flags, or a text to print (help, version). */
export type Parsed =
  | {
      command: 'run' | 'plan' | 'verify' | 'cleanup' | 'init'
      values: Record<string, unknown>
      args: string[]
    }
  | { command: 'print'; text: string }

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
