// commander's parse errors in this tool's words: the flag, what is wrong, the fix, a close match.
import type { CommanderError } from 'commander'
import { ConfigurationError } from '../errors.js'
import { didYouMean } from '../suggest.js'
import { ALL_FLAGS, COMMANDS, FLAGS_OF } from './command-flags.js'

/** A CommanderError of parsing `argv` as a ConfigurationError that names the input and the fix. */
export function translate(error: CommanderError, argv: string[]): ConfigurationError {
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
