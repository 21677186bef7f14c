// The benchmark: our code paths against plain Docker doing the same work, timed as interleaved
// pairs (A, B, A, B, ...) after one untimed warm-up pair, reported as medians and ratios.
// Run it with `npm run bench` (which bundles this file with the current sources first).
//
//   P1  DockerRuntime.runPhase of a hardened `true` container  vs  docker run --rm --network none IMG true
//   P2  a whole `airlock run` with a no-op agent, warm image    vs  a shell script: docker run + git diff + tar
//   P3  a no-op image rebuild through resolveImage (cache hit)  vs  a warm classic `docker build`
//   G1  the same whole `airlock run` under gVisor (runtime runsc)  vs  under runc
//   P7  process start to the agent's first output line, `airlock run`, warm image
//       vs  process start to the first output line of `docker run --rm` of the same image
//   P8  8 concurrent `airlock run`s (no-op agent, warm image)  vs  one `airlock run`
import { makeRepo } from './p2-repo.js'
import { execFile, spawn } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import { promisify } from 'node:util'
import { parseArgs } from 'node:util'
import { getInputs } from '../src/inputs.js'
import { defaultContext } from '../src/inputs/default-context.js'
import type { PhasePlan, RunPlan } from '../src/plan.js'
import { planRun } from '../src/plan.js'
import Docker from 'dockerode'
import { DockerRuntime } from '../src/sandbox/docker/index.js'
import { containerSpec } from '../src/sandbox/spec.js'
import type { Comparison } from './stats.js'
import type { StepTimes } from './stats.js'
import {
  formatBreakdown,
  formatMarkdown,
  formatTable,
  interleavedSchedule,
  median,
  summarize
} from './stats.js'
import { readHost } from '../src/host.js'

const execFileP = promisify(execFile)

/** The lines of the breakdown: report.json's steps and the benchmark's own clock. */
const BREAKDOWN = [
  { key: 'totalMs', label: 'whole process (timed by the benchmark)' },
  { key: 'firstLineMs', label: "to the agent's first line (timed by the benchmark)" },
  { key: 'startupMs', label: "Node's start, loading the CLI, reading the inputs" },
  { key: 'beforeAgentMs', label: 'pipeline start to the agent stage, of which:' },
  { key: 'resolveMs', label: "the engine's facts and the runtime check", indent: true },
  { key: 'imageMs', label: 'the agent image (cache hit)', indent: true },
  { key: 'scratchMs', label: 'the scratch filesystem (mkfs, mount)', indent: true },
  { key: 'workspaceMs', label: 'the workspace, after the scratch filesystem', indent: true },
  { key: 'agentMs', label: 'the agent phase (create, start, wait, remove)' },
  { key: 'diffMs', label: 'the snapshot and the diff' },
  { key: 'threatReviewMs', label: 'the threat review of the diff' },
  { key: 'scanMs', label: 'the secret scan of the outputs' },
  { key: 'wallMs', label: "the pipeline's wall time up to report.json" },
  { key: 'afterReportMs', label: 'after report.json: provenance, cleanup, unmount, exit' }
]
const here = path.dirname(fileURLToPath(import.meta.url))

const BASE_IMAGE = 'airlock-local/busybox:1'
const BENCH_LABEL = 'dev.airlock.bench'
/** What P7's agent prints first (the line whose arrival is timed). */
const FIRST_LINE = 'airlock-bench-first-line'

interface Case {
  id: string
  title: string
  target: number
  /** Resolves with the time to count (ms), or nothing to count the whole call. */
  ours: () => Promise<void | number>
  baseline: () => Promise<void | number>
  /** An absolute goal for the median of `ours` (ms), reported next to the ratio. */
  absoluteGoalMs?: number
  /** After each timed run of `ours`: where its time went (report.json's steps), given its total. */
  breakdown?: (totalMs: number) => Promise<StepTimes>
}

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    only: { type: 'string' },
    markdown: { type: 'boolean', default: false },
    cli: { type: 'string', default: path.join(here, 'cli.js') }
  }
})
const rounds = Number(flags.rounds)
if (!Number.isInteger(rounds) || rounds < 1) {
  process.stderr.write(`--rounds must be a positive integer, got "${flags.rounds}"\n`)
  process.exit(2)
}
const only = flags.only === undefined ? undefined : new Set(flags.only.toUpperCase().split(','))
const benchId = `bench-${Date.now().toString(36)}-${Math.random().toString(16).slice(2, 6)}`
const say = (m: string): void => void process.stderr.write(`[bench] ${m}\n`)

/** Runs a program; resolves when it exits 0, rejects with its stderr otherwise. */
function run(cmd: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(cmd, args, { ...options, stdio: ['ignore', 'ignore', 'pipe'] })
    let err = ''
    child.stderr.on('data', (d: Buffer) => {
      if (err.length < 4000) err += d.toString('utf8')
    })
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.trim()}`))
    )
  })
}

/**
 * Runs a program and measures the time from spawning it to the first line of its standard output
 * that contains `marker`; resolves with that time once the program has exited 0.
 */
function firstLine(
  cmd: string,
  args: string[],
  marker: string,
  options: { cwd?: string } = {}
): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const t0 = performance.now()
    let seenAt: number | undefined
    let out = ''
    let err = ''
    const child = spawn(cmd, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.on('data', (d: Buffer) => {
      if (seenAt !== undefined) return
      out += d.toString('utf8')
      if (out.includes(marker)) seenAt = performance.now() - t0
      else if (out.length > 65536) out = out.slice(-4096)
    })
    child.stderr.on('data', (d: Buffer) => {
      if (err.length < 4000) err += d.toString('utf8')
    })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.trim()}`))
      else if (seenAt === undefined) reject(new Error(`${cmd}: "${marker}" never appeared`))
      else resolve(seenAt)
    })
  })
}

const devNull = (): Writable =>
  new Writable({
    write(_chunk, _enc, cb) {
      cb()
    }
  })

async function main(): Promise<void> {
  const docker = new Docker()
  const sandbox = new DockerRuntime(readHost(process.env), docker)
  const base = await docker.getImage(BASE_IMAGE).inspect()
  const loadBefore = os.loadavg()[0]
  const root = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'airlock-bench-'))
  let interrupted = false
  const onSignal = (): void => {
    interrupted = true
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  try {
    // The fixtures: a repository, an agent image Dockerfile FROM the busybox image ID, a task.
    const repo = path.join(root, 'repo')
    await makeRepo(repo)
    const imageDir = path.join(root, 'image')
    await fs.promises.mkdir(imageDir)
    await fs.promises.writeFile(
      path.join(imageDir, 'Dockerfile'),
      `FROM ${base.Id}\nCOPY noop.sh /opt/noop.sh\n`
    )
    await fs.promises.writeFile(path.join(imageDir, 'noop.sh'), '#!/bin/sh\nexit 0\n', {
      mode: 0o755
    })
    const ctx = { ...defaultContext(process.env), workspace: root }
    const inputsFor = (runId: string): RunPlan =>
      planRun(
        getInputs(
          (name) =>
            ({
              path: 'repo',
              dockerfile: 'image/Dockerfile',
              task: 'do nothing',
              'agent-command': 'true',
              'output-dir': 'out',
              'run-id': runId
            })[name],
          ctx
        )
      )
    const plan0 = inputsFor(`${benchId}-setup`)
    // Built once, before anything is timed (P2's warm image and P3's cache entry).
    const image = await sandbox.resolveImage(plan0.image, { info: () => undefined })
    say(`agent image ${image.id.slice(7, 19)} (${image.cached ? 'cached' : 'built now'})`)

    const workspaceDir = path.join(root, 'p1-workspace')
    await fs.promises.mkdir(workspaceDir)
    const taskFile = path.join(root, 'task.md')
    await fs.promises.writeFile(taskFile, 'do nothing\n', { mode: 0o444 })

    const bareScript = path.join(root, 'bare.sh')
    await fs.promises.writeFile(
      bareScript,
      [
        '#!/bin/sh',
        '# The same job without airlock: a workspace copy, the agent container, the diff, a tarball.',
        'set -eu',
        'repo=$1 img=$2 out=$3 name=$4 label=$5',
        'ws=$(mktemp -d)',
        'rm -rf "$out" && mkdir -p "$out"',
        'git -C "$repo" archive HEAD | tar -x -C "$ws"',
        'docker run --rm --name "$name" --label "$label" --network none -v "$ws:/workspace" -w /workspace "$img" true >"$out/agent.log" 2>&1',
        'export GIT_INDEX_FILE="$ws.index"',
        'git --git-dir="$repo/.git" read-tree HEAD',
        'git --git-dir="$repo/.git" --work-tree="$ws" add -A',
        'git --git-dir="$repo/.git" diff --cached --no-ext-diff --no-textconv HEAD >"$out/diff.patch"',
        'tar -C "$out" -cf "$out.tar" .',
        'rm -rf "$ws" "$ws.index"',
        ''
      ].join('\n'),
      { mode: 0o755 }
    )

    let n = 0
    const next = (): number => ++n
    const ourLifecycle = async (command: string): Promise<number> => {
      const plan = inputsFor(`${benchId}-p1-${next()}`)
      const phase = plan.phases.find((p) => p.name === 'agent') as PhasePlan
      const spec = containerSpec(
        plan,
        { ...phase, command: ['/bin/sh', '-c', command] },
        {
          imageId: base.Id,
          workspaceDir,
          taskFile,
          env: []
        }
      )
      const r = await sandbox.runPhase(spec, {
        timeoutMs: 60_000,
        graceMs: 1000,
        stdout: devNull(),
        stderr: devNull()
      })
      if (r.exitCode !== 0) throw new Error(`runPhase: ${JSON.stringify(r)}`)
      return r.durationMs
    }
    // A lifecycle that returns before its container has exited would look fast: check that it
    // waits, for longer than runPhase's output drain delay (3 s) so that cannot mask it.
    const slept = await ourLifecycle('sleep 4')
    if (slept < 4000) throw new Error(`runPhase returned after ${slept} ms for \`sleep 4\``)

    /**
     * A whole `airlock run` of the no-op agent on the warm image (P2, G1, P8); runs that go at the
     * same time (P8) each need their own output folder.
     */
    const noopRun = async (
      runId: string,
      extra: string[] = [],
      outputDir = 'out-airlock'
    ): Promise<void> => {
      await run(
        process.execPath,
        [
          flags.cli as string,
          'run',
          '--path',
          'repo',
          '--dockerfile',
          'image/Dockerfile',
          '--task',
          'do nothing',
          '--agent-command',
          'true',
          '--output-dir',
          outputDir,
          '--run-id',
          runId,
          '--fail-on-outcome',
          '--quiet',
          ...extra
        ],
        { cwd: root }
      )
    }

    /** The steps of the last run in `out-airlock` (report.json), and what the report cannot see. */
    const stepsOfLastRun = async (totalMs: number): Promise<StepTimes> => {
      const report = JSON.parse(
        await fs.promises.readFile(path.join(root, 'out-airlock', 'report.json'), 'utf8')
      ) as {
        agent: { durationMs: number }
        cost: { wallMs: number; steps?: Record<string, number> }
      }
      const st = report.cost.steps ?? {}
      return {
        ...st,
        totalMs,
        agentMs: report.agent.durationMs,
        wallMs: report.cost.wallMs,
        // Provenance, the cleanup (containers, the scratch filesystem's unmount) and the exit.
        afterReportMs:
          st.startupMs !== undefined ? totalMs - st.startupMs - report.cost.wallMs : undefined
      }
    }

    /** One no-op run of P8, in its own output folder. */
    const airlockRun = (label: string): Promise<void> => {
      const runId = `${benchId}-${label}-${next()}`
      return noopRun(runId, [], `out-${runId}`)
    }

    const cases: Case[] = [
      {
        id: 'P1',
        title: `container lifecycle of \`true\` (runPhase vs docker run --rm)`,
        target: 1.1,
        ours: async () => {
          await ourLifecycle('true')
        },
        baseline: () =>
          run('docker', [
            'run',
            '--rm',
            '--name',
            `${benchId}-p1b-${next()}`,
            '--label',
            `${BENCH_LABEL}=${benchId}`,
            '--network',
            'none',
            BASE_IMAGE,
            'true'
          ])
      },
      {
        id: 'P2',
        title: 'whole `airlock run`, no-op agent, warm image (vs docker run + git diff + tar)',
        target: 1.15,
        ours: () => noopRun(`${benchId}-p2-${next()}`),
        breakdown: stepsOfLastRun,
        baseline: () =>
          run('sh', [
            bareScript,
            repo,
            image.id,
            path.join(root, 'out-bare'),
            `${benchId}-p2b-${next()}`,
            `${BENCH_LABEL}=${benchId}`
          ])
      },
      {
        id: 'P3',
        title: 'no-op image rebuild (resolveImage cache hit vs warm classic docker build)',
        target: 1.5,
        ours: async () => {
          const got = await sandbox.resolveImage(plan0.image, { info: () => undefined })
          if (!got.cached || got.id !== image.id) throw new Error('resolveImage missed its cache')
        },
        baseline: () =>
          run('docker', ['build', '-q', '-t', 'airlock-bench/baseline:p3', imageDir], {
            env: { ...process.env, DOCKER_BUILDKIT: '0' }
          })
      },
      {
        id: 'G1',
        title: 'whole `airlock run`, no-op agent, warm image, on gVisor (runsc vs runc)',
        target: 2,
        ours: () => noopRun(`${benchId}-g1-${next()}`, ['--runtime', 'runsc']),
        baseline: () => noopRun(`${benchId}-g1b-${next()}`, ['--runtime', 'runc'])
      },
      {
        id: 'P7',
        title: "process start to the agent's first output line, warm image (vs docker run --rm)",
        target: 1.5,
        absoluteGoalMs: 1000,
        // The run goes on after its first line: its total and what follows the report are not P7's.
        breakdown: async (ms) => ({
          ...(await stepsOfLastRun(ms)),
          totalMs: undefined,
          afterReportMs: undefined,
          firstLineMs: ms
        }),
        ours: () =>
          firstLine(
            process.execPath,
            [
              flags.cli as string,
              'run',
              '--path',
              'repo',
              '--dockerfile',
              'image/Dockerfile',
              '--task',
              'do nothing',
              '--agent-command',
              `echo ${FIRST_LINE}`,
              '--output-dir',
              'out-airlock',
              '--run-id',
              `${benchId}-p7-${next()}`,
              '--fail-on-outcome'
            ],
            FIRST_LINE,
            { cwd: root }
          ),
        baseline: () =>
          firstLine(
            'docker',
            [
              'run',
              '--rm',
              '--name',
              `${benchId}-p7b-${next()}`,
              '--label',
              `${BENCH_LABEL}=${benchId}`,
              '--network',
              'none',
              image.id,
              'sh',
              '-c',
              `echo ${FIRST_LINE}`
            ],
            FIRST_LINE
          )
      },
      {
        id: 'P8',
        title: '8 concurrent `airlock run`s, no-op agent, warm image (vs one `airlock run`)',
        target: 4,
        ours: async () => {
          await Promise.all(Array.from({ length: 8 }, () => airlockRun('p8')))
        },
        baseline: () => airlockRun('p8b')
      }
    ]

    const comparisons: Comparison[] = []
    const breakdowns = new Map<string, StepTimes[]>()
    for (const c of cases) {
      if (only && !only.has(c.id)) continue
      say(`${c.id}: warm-up pair, then ${rounds} interleaved pairs`)
      await c.ours()
      await c.baseline()
      const comparison: Comparison = {
        id: c.id,
        title: c.title,
        target: c.target,
        ours: [],
        baseline: []
      }
      for (const which of interleavedSchedule(rounds)) {
        if (interrupted) throw new Error('interrupted')
        const t0 = performance.now()
        const counted = await (which === 'A' ? c.ours() : c.baseline())
        const ms = typeof counted === 'number' ? counted : performance.now() - t0
        ;(which === 'A' ? comparison.ours : comparison.baseline).push(ms)
        if (which === 'A' && c.breakdown)
          breakdowns.set(c.id, [...(breakdowns.get(c.id) ?? []), await c.breakdown(ms)])
      }
      comparisons.push(comparison)
      say(
        `${c.id} ours:     ${comparison.ours.map((x) => x.toFixed(0)).join(' ')} ms\n` +
          `[bench] ${c.id} baseline: ${comparison.baseline.map((x) => x.toFixed(0)).join(' ')} ms`
      )
    }

    const summaries = comparisons.map(summarize)
    const { stdout: version } = await execFileP('docker', [
      'version',
      '--format',
      '{{.Server.Version}}'
    ])
    process.stdout.write(
      `\nAgent Airlock benchmark — ${rounds} interleaved runs each (A, B, A, B, ...), medians\n` +
        `machine: ${os.cpus().length} CPU, Docker ${version.trim()}, node ${process.version}, ` +
        `load average ${loadBefore.toFixed(1)} at the start, ${os.loadavg()[0].toFixed(1)} at the end\n\n` +
        formatTable(summaries) +
        '\n'
    )
    if (flags.markdown) process.stdout.write('\n' + formatMarkdown(summaries) + '\n')
    for (const [id, runs] of breakdowns)
      process.stdout.write(
        `\n${id}: where the time of one run goes (medians over its runs; indented steps run alongside each other)\n` +
          formatBreakdown(runs, BREAKDOWN) +
          '\n'
      )
    const missed = summaries.filter((s) => !s.pass).map((s) => s.id)
    for (const c of cases) {
      const measured = comparisons.find((x) => x.id === c.id)
      if (c.absoluteGoalMs === undefined || measured === undefined) continue
      const ms = median(measured.ours)
      const ok = ms < c.absoluteGoalMs
      if (!ok) missed.push(`${c.id} (absolute)`)
      process.stdout.write(
        `${c.id} absolute: median ${ms.toFixed(0)} ms (goal < ${c.absoluteGoalMs} ms: ${ok ? 'pass' : 'miss'})\n`
      )
    }
    if (missed.length > 0)
      process.stdout.write(
        `\nmissed: ${missed.join(', ')} (benchmarks report; they never fail the build)\n`
      )
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    // Only what this benchmark created: its labelled baseline containers, its runs, its folder.
    const leftovers = await docker
      .listContainers({
        all: true,
        filters: JSON.stringify({ label: [`${BENCH_LABEL}=${benchId}`] })
      })
      .catch(() => [])
    for (const c of leftovers)
      await docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => undefined)
    const runs = await docker
      .listContainers({ all: true, filters: JSON.stringify({ name: [benchId] }) })
      .catch(() => [])
    for (const c of runs)
      await docker
        .getContainer(c.Id)
        .remove({ force: true, v: true })
        .catch(() => undefined)
    await fs.promises.rm(root, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`[bench] failed: ${error instanceof Error ? error.message : error}\n`)
  process.exitCode = 1
})
