/**
 * The threat review: (1) detection and false-positive rates per class over the corpus
 * (fixtures/threat-corpus/); (2) the stage's cost against the P2 run (a whole `airlock run` of the
 * bundled CLI on the warm busybox image) in the same process: report.json's `threatReviewMs`
 * against the rest of the run, for P2's no-op agent and for an agent that changes every file of
 * the fixture repository, and the stage alone on a 1 MB diff against P2's median. The runs
 * alternate (no-op, change, no-op, ...). Prints tables; asserts nothing.
 */
import { makeRepo } from './p2-repo.js'
import { execFile } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { performance } from 'node:perf_hooks'
import { promisify } from 'node:util'
import Docker from 'dockerode'
import { loadCorpus } from '../__fixtures__/threat-corpus.js'
import { THREAT_CLASSES, reviewPatch } from '../src/threat-review/review.js'
import { median } from './stats.js'

const ROUNDS = Number(process.env.AIRLOCK_BENCH_THREAT_ROUNDS ?? '10')
const CLI = path.resolve('bench/dist/cli.js')
const BASE_IMAGE = 'airlock-local/busybox:1'
const execFileP = promisify(execFile)
const say = (m: string): void => void process.stderr.write(`[bench:threat] ${m}\n`)
const pct = (n: number, d: number): string => (d === 0 ? '–' : `${Math.round((100 * n) / d)}%`)

// ---------------------------------------------------------------------------------------------
// (1) The corpus.

async function rates(): Promise<string> {
  const corpus = loadCorpus()
  const rows: string[] = []
  let plainAll = 0
  let plainHit = 0
  let disAll = 0
  let disHit = 0
  for (const c of THREAT_CLASSES) {
    const count = async (kind: 'malicious' | 'disguised'): Promise<[number, number, number]> => {
      const cases = corpus.filter((x) => x.kind === kind && x.class === c)
      let flagged = 0
      let inClass = 0
      for (const x of cases) {
        const r = await reviewPatch(x.patch, { diffSha256: null, secrets: 'scan' })
        if (r.verdict !== 'clean') flagged++
        if (r.findings.some((f) => f.class === c)) inClass++
      }
      return [cases.length, flagged, inClass]
    }
    const [pn, pf, pc] = await count('malicious')
    const [dn, df, dc] = await count('disguised')
    plainAll += pn
    plainHit += pf
    disAll += dn
    disHit += df
    rows.push(
      `| ${c} | ${pn} | ${pf}/${pn} (${pct(pf, pn)}) | ${pct(pc, pn)} | ${dn} | ${df}/${dn} (${pct(df, dn)}) | ${pct(dc, dn)} |`
    )
  }
  const ordinary = corpus.filter((x) => x.kind === 'ordinary')
  const flagged: string[] = []
  for (const x of ordinary) {
    const r = await reviewPatch(x.patch, { diffSha256: null, secrets: 'scan' })
    if (r.verdict !== 'clean')
      flagged.push(`${x.id} (${[...new Set(r.findings.map((f) => f.rule))].join(', ')})`)
  }
  return [
    '',
    `Threat review over the corpus (${corpus.length} diffs)`,
    '',
    '| class | plain | caught (not clean) | with a finding of its class | disguised | caught | with a finding of its class |',
    '|---|--:|--:|--:|--:|--:|--:|',
    ...rows,
    `| all | ${plainAll} | ${plainHit}/${plainAll} (${pct(plainHit, plainAll)}) | | ${disAll} | ${disHit}/${disAll} (${pct(disHit, disAll)}) | |`,
    '',
    `Ordinary changes flagged: ${flagged.length}/${ordinary.length} (${pct(flagged.length, ordinary.length)}; target < 10%)${flagged.length > 0 ? `: ${flagged.join('; ')}` : ''}`,
    ''
  ].join('\n')
}

// ---------------------------------------------------------------------------------------------
// (2) The cost.

/** The P2 fixture: 8 source files in two folders, one commit; the agent image FROM busybox. */
async function fixture(root: string): Promise<void> {
  const repo = path.join(root, 'repo')
  await makeRepo(repo)
  const base = await new Docker().getImage(BASE_IMAGE).inspect()
  await fs.promises.mkdir(path.join(root, 'image'))
  await fs.promises.writeFile(path.join(root, 'image', 'Dockerfile'), `FROM ${base.Id}\n`)
}

/** One whole run of the CLI; its wall time, and the threat review's share from report.json. */
async function airlockRun(
  root: string,
  agent: string,
  runId: string
): Promise<{ totalMs: number; threatMs: number; files: number }> {
  const start = performance.now()
  await execFileP(
    process.execPath,
    [
      CLI,
      'run',
      '--path',
      'repo',
      '--dockerfile',
      'image/Dockerfile',
      '--task',
      'bench',
      '--agent-command',
      agent,
      '--output-dir',
      'out',
      '--run-id',
      runId,
      '--quiet'
    ],
    { cwd: root }
  )
  const totalMs = performance.now() - start
  const report = JSON.parse(
    await fs.promises.readFile(path.join(root, 'out', 'report.json'), 'utf8')
  ) as {
    diff: { totalFiles: number }
    cost: { steps?: { threatReviewMs?: number } }
  }
  return {
    totalMs,
    threatMs: report.cost.steps?.threatReviewMs ?? Number.NaN,
    files: report.diff.totalFiles
  }
}

/** A 1 MB diff of ordinary-looking code: the corpus's ordinary changes, repeated. */
function bigPatch(): string {
  const ordinary = loadCorpus()
    .filter((c) => c.kind === 'ordinary')
    .map((c) => c.patch)
  const parts: string[] = []
  let size = 0
  for (let i = 0; size < 1024 * 1024; i++) {
    const p = ordinary[i % ordinary.length].replace(
      /^diff --git a\/(\S+) b\/\1/gm,
      (_, f: string) => `diff --git a/${i}/${f} b/${i}/${f}`
    )
    parts.push(p)
    size += p.length
  }
  return parts.join('')
}

async function cost(): Promise<string> {
  const root = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'airlock-bench-threat-'))
  try {
    await fixture(root)
    const change =
      'for f in src/*.js src/lib/*.js; do sed -i \'s/return x \\* \\([0-9]\\) + 1/return x * \\1 + 2/\' "$f"; echo \'export const version = 2\' >> "$f"; done'
    const id = `bench-threat-${process.pid}`
    // Untimed: the image built, the page cache warm.
    await airlockRun(root, 'true', `${id}-warm`)
    const noop: { totalMs: number; threatMs: number }[] = []
    const changed: { totalMs: number; threatMs: number; files: number }[] = []
    for (let r = 0; r < ROUNDS; r++) {
      if (r % 2 === 0) {
        noop.push(await airlockRun(root, 'true', `${id}-a${r}`))
        changed.push(await airlockRun(root, change, `${id}-b${r}`))
      } else {
        changed.push(await airlockRun(root, change, `${id}-b${r}`))
        noop.push(await airlockRun(root, 'true', `${id}-a${r}`))
      }
    }
    const big = bigPatch()
    const bigTimes: number[] = []
    await reviewPatch(big, { diffSha256: null, secrets: [] })
    for (let r = 0; r < ROUNDS; r++) {
      const s = performance.now()
      await reviewPatch(big, { diffSha256: null, secrets: [] })
      bigTimes.push(performance.now() - s)
    }
    const p2 = median(noop.map((x) => x.totalMs))
    const row = (
      label: string,
      runs: { totalMs: number; threatMs: number }[],
      diff: string
    ): string => {
      const t = median(runs.map((x) => x.threatMs))
      const rest = median(runs.map((x) => x.totalMs - x.threatMs))
      return `| ${label} | ${diff} | ${t.toFixed(2)} ms | ${rest.toFixed(0)} ms | ${((100 * t) / rest).toFixed(2)}% | ≤ 5% |`
    }
    const b = median(bigTimes)
    return [
      '',
      `Threat review cost (medians of ${ROUNDS} runs each, alternating; P2 = a whole \`airlock run\`, warm busybox image)`,
      '',
      '| run | diff | threat review | rest of the run | added | target |',
      '|---|---|--:|--:|--:|--:|',
      row('P2 (no-op agent)', noop, 'empty'),
      row('P2 with an agent that edits every file', changed, `${changed[0]?.files ?? 0} files`),
      `| the stage alone on a 1 MB diff, against P2's median run | ${(big.length / 1024).toFixed(0)} KB, ${big.split('\ndiff --git ').length} files | ${b.toFixed(1)} ms | ${p2.toFixed(0)} ms | ${((100 * b) / p2).toFixed(2)}% | |`,
      ''
    ].join('\n')
  } finally {
    await fs.promises.rm(root, { recursive: true, force: true })
  }
}

const only = process.argv.slice(2)
let out = ''
if (!only.includes('--no-rates')) out += await rates()
if (!only.includes('--rates-only')) {
  say('timing P2 runs with and without a change...')
  out += await cost()
}
process.stdout.write(out)
