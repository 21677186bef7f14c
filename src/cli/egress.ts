// `airlock egress suggest DIR`: the minimal allow-hosts list for a run, proposed from its evidence.
// The folder is checked against its provenance.json first (like `airlock verify`); its files are
// still the agent's doing, read as hostile input (src/egress/suggest-hosts.ts).
import * as fs from 'node:fs'
import * as path from 'node:path'
import { ConfigurationError, EXIT } from '../errors.js'
import { parseCredential } from '../egress/credential-routes.js'
import { EGRESS_FILES } from '../egress/evidence.js'
import { renderSuggestion, suggestHosts } from '../egress/suggest-hosts.js'
import { isTelemetryHost } from '../egress/telemetry.js'
import { PRESETS } from '../presets/presets.js'
import { PROVENANCE_FILE } from '../report/provenance.js'
import { verifyProvenance } from '../report/provenance-verify.js'
import { didYouMean } from '../suggest.js'
import { stripHidden } from '../text-filter.js'
import { requireFolder } from './verify.js'

export const EGRESS_HELP = `Usage: airlock egress suggest DIR

Proposes the minimal allow-hosts for a run from its output folder: the hosts the agent used or
was refused by name (a whole registry as its group, e.g. pypi), with request counts, as a block
for the workflow and a list for .github/airlock.yml; for credentials routes, the methods and path
prefixes they served (for allow=). The folder is checked against its provenance.json first.

Examples:
  airlock egress suggest airlock-out

Exit codes: 0 suggestion printed · 1 the folder does not match its provenance.json · 2 DIR is not
a folder.
`

/** At most this much of egress.jsonl / transcript.jsonl is read. */
const MAX_READ = 64 * 1024 * 1024

function readBounded(file: string): string {
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0))
  } catch {
    return ''
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return ''
    const buf = Buffer.alloc(Math.min(MAX_READ, fs.fstatSync(fd).size))
    const n = fs.readSync(fd, buf, 0, buf.length, 0)
    const text = buf.subarray(0, n).toString('utf8')
    // A cut file ends in a partial line: drop it.
    return n === MAX_READ ? text.slice(0, text.lastIndexOf('\n') + 1) : text
  } finally {
    fs.closeSync(fd)
  }
}

/** The preset the run's report.json names, when it is one of ours (else undefined). */
function runPreset(dir: string): string | undefined {
  try {
    const report = JSON.parse(readBounded(path.join(dir, 'report.json'))) as {
      agent?: { preset?: unknown }
    }
    const p = report.agent?.preset
    return typeof p === 'string' && Object.hasOwn(PRESETS, p) ? p : undefined
  } catch {
    return undefined
  }
}

export function egressCommand(args: string[]): number {
  const [sub, dir, ...rest] = args
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    process.stdout.write(EGRESS_HELP)
    return EXIT.ok
  }
  if (sub !== 'suggest')
    throw new ConfigurationError(
      'command',
      `"egress ${sub}" is not a command.${didYouMean(sub, ['suggest'], 'egress ')} Use airlock egress suggest DIR.`
    )
  if (dir === '--help' || dir === '-h') {
    process.stdout.write(EGRESS_HELP)
    return EXIT.ok
  }
  if (dir === undefined)
    throw new ConfigurationError(
      'DIR',
      'is required: the output folder of a run, e.g. airlock egress suggest airlock-out'
    )
  if (rest.length > 0)
    throw new ConfigurationError(
      'arguments',
      `unexpected "${rest.join(' ')}": airlock egress suggest takes one folder`
    )
  requireFolder(dir)
  const verified = verifyProvenance(dir)
  if (!verified.ok) {
    for (const p of verified.problems) process.stdout.write(`mismatch: ${stripHidden(p)}\n`)
    process.stderr.write(
      `airlock: ${dir} does not match its ${PROVENANCE_FILE}; nothing is suggested from evidence that may have been changed\n`
    )
    return EXIT.outcome
  }
  const preset = runPreset(dir)
  // The presets' routes: their upstream base paths, so path prefixes read as allow= takes them.
  const basePaths: Record<string, string> = {}
  if (preset !== undefined) {
    const route = parseCredential(PRESETS[preset].credentials)
    basePaths[route.name] = new URL(route.upstream).pathname
  }
  const suggestion = suggestHosts(
    readBounded(path.join(dir, EGRESS_FILES.egress)),
    readBounded(path.join(dir, EGRESS_FILES.transcript)),
    { basePaths, skip: (host) => isTelemetryHost(preset, host) }
  )
  process.stdout.write(renderSuggestion(suggestion))
  return EXIT.ok
}
