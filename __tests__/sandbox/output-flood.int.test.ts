import { spawn } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { pathToFileURL } from 'node:url'
import { DIST, buildDist } from '../support/cli.js'
import { BUSYBOX, imageId, leftovers, makeWorkspace, uniqueRunId } from '../support/run.js'

/**
 * Memory under a flood of output: the CLI (the bundle, as users run it) with every phase — the
 * install, the agent, the tests — printing hundreds of megabytes, against the same run printing a
 * line each. The output streams from the container to the capped log files with back-pressure,
 * so the peak resident memory stays within a fixed bound of the small run's, whatever the volume
 * (figures in docs/BENCHMARKS.md).
 */

const MIB = 1024 * 1024
/**
 * What a flood may add to the small run's peak: the garbage collector's slack under a high rate
 * of short-lived buffers (a larger young generation, freed buffers not yet collected), not the
 * volume.
 */
const BOUND = 128 * MIB
/** What almost three times the output may add to the peak. */
const FLAT = 32 * MIB
const LINE = '0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz'
const flood = (mb: number): string => `yes ${LINE} | head -c ${mb * 1000 * 1000}; echo done`

let ws: string
let hookDir: string

beforeAll(() => {
  buildDist()
  ws = makeWorkspace({ 'a.txt': 'a\n' }, `FROM ${imageId(BUSYBOX)}\n`)
  hookDir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-rss-'))
  // Loaded before the CLI: writes the process's peak resident set size (KiB) when it exits.
  fs.writeFileSync(
    path.join(hookDir, 'peak.mjs'),
    [
      "import * as fs from 'node:fs'",
      "process.on('exit', () => fs.writeFileSync(process.env.PEAK_FILE, String(process.resourceUsage().maxRSS)))",
      ''
    ].join('\n')
  )
})

afterAll(() => {
  fs.rmSync(ws, { recursive: true, force: true })
  fs.rmSync(hookDir, { recursive: true, force: true })
})

/** Runs the CLI with the three phases' commands; its exit code, peak RSS (bytes) and output dir. */
function runCli(
  name: string,
  commands: { setup: string; agent: string; tests: string }
): Promise<{ code: number | null; peak: number; out: string; runId: string }> {
  const runId = uniqueRunId(`flood-${name}`)
  const out = path.join(ws, `out-${runId}`)
  const peakFile = path.join(hookDir, `${name}.peak`)
  const child = spawn(
    process.execPath,
    [
      '--import',
      pathToFileURL(path.join(hookDir, 'peak.mjs')).href,
      path.join(DIST, 'cli.js'),
      'run',
      ...['--path', 'repo', '--dockerfile', 'agent/Dockerfile'],
      ...['--setup-command', commands.setup],
      ...['--agent-command', commands.agent, '--test-command', commands.tests],
      ...['--memory', '128m', '--cpus', '1', '--timeout-minutes', '5'],
      ...['--run-id', runId, '--output-dir', out, '--quiet']
    ],
    { cwd: ws, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, PEAK_FILE: peakFile } }
  )
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => {
      if (!fs.existsSync(peakFile)) return reject(new Error(`no peak written: ${stderr}`))
      resolve({ code, peak: Number(fs.readFileSync(peakFile, 'utf8')) * 1024, out, runId })
    })
  })
}

type Report = {
  outcome: string
  setup: { phase: { logBytes: number } }
  agent: { logBytes: number }
  tests: { phase: { logBytes: number } }
}

test('a flood of output in every phase keeps memory flat: a fixed bound over a small run, whatever the volume', async () => {
  const small = await runCli('small', { setup: 'echo i', agent: 'echo a', tests: 'echo t' })
  const each = (mb: number) => ({ setup: flood(mb), agent: flood(mb), tests: flood(mb) })
  const some = await runCli('180mb', each(60))
  const much = await runCli('510mb', each(170))
  const mib = (n: number): string => `${(n / MIB).toFixed(0)} MiB`
  process.stdout.write(
    `peak RSS: small run ${mib(small.peak)}, 180 MB flood ${mib(some.peak)}, 510 MB flood ${mib(much.peak)}\n`
  )
  expect([small.code, some.code, much.code]).toEqual([0, 0, 0])
  // Everything was read: the logs counted every byte and kept the first max-log-bytes of each.
  const report = JSON.parse(fs.readFileSync(path.join(much.out, 'report.json'), 'utf8')) as Report
  expect(report.outcome).toBe('success')
  expect([report.setup.phase.logBytes, report.agent.logBytes, report.tests.phase.logBytes]).toEqual(
    [170_000_005, 170_000_005, 170_000_005]
  )
  for (const log of ['setup.log', 'agent.log', 'tests.log'])
    expect(fs.statSync(path.join(much.out, 'logs', log)).size).toBeLessThan(6 * MIB)
  expect(much.peak).toBeLessThan(small.peak + BOUND)
  // Flat: almost three times the output, the same peak (the garbage collector's slack only).
  expect(much.peak).toBeLessThan(some.peak + FLAT)
  for (const r of [small, some, much]) expect(await leftovers(r.runId)).toBe(0)
}, 300_000)
