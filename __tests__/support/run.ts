import { execFileSync, spawn } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import Docker from 'dockerode'
import { getInputs } from '../../src/inputs.js'
import { MemoryLogger } from '../../src/log.js'
import { runPipeline } from '../../src/pipeline/run.js'
import type { RunResult } from '../../src/pipeline/run.js'
import { planRun } from '../../src/plan.js'
import { validateReport } from '../../src/report/schema.js'
import { git } from './git.js'
import { DockerRuntime } from '../../src/sandbox/docker/index.js'
import type { Runtime } from '../../src/sandbox/types.js'
import type { CacheStore } from '../../src/cache/store.js'
import { LOCAL_EVENT } from '../../src/event.js'
import { testHost } from './host.js'

export const BUSYBOX = 'airlock-local/busybox:1'
export const docker = new Docker()

export function imageId(tag: string): string {
  return execFileSync('docker', ['image', 'inspect', '-f', '{{.Id}}', tag]).toString().trim()
}

export { git } from './git.js'

/** A workspace folder holding a git repository with `files` committed and a Dockerfile FROM the busybox image. */
export function makeWorkspace(
  files: Record<string, string> = { 'README.md': 'hello\n' },
  dockerfile?: string
): string {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-it-'))
  const repo = path.join(ws, 'repo')
  fs.mkdirSync(repo)
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(repo, name)), { recursive: true })
    fs.writeFileSync(path.join(repo, name), content)
  }
  git(repo, 'init', '-q', '-b', 'main')
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '-m', 'base')
  fs.mkdirSync(path.join(ws, 'agent'))
  fs.writeFileSync(path.join(ws, 'agent', 'Dockerfile'), dockerfile ?? `FROM ${imageId(BUSYBOX)}\n`)
  return ws
}

let counter = 0
export function uniqueRunId(prefix: string): string {
  counter++
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`
}

export interface TestRun extends RunResult {
  log: MemoryLogger
  outputDir: string
}

/** Runs the real pipeline against the real daemon with action-style inputs. */
export async function runAirlock(
  ws: string,
  values: Record<string, string>,
  options: {
    environment?: NodeJS.ProcessEnv
    signal?: AbortSignal
    docker?: Docker
    /** The runtime boundary to use instead of a plain DockerRuntime on `docker`. */
    runtime?: Runtime
    /** Parent of the run's temporary folder (default: the OS temp folder). */
    tempRoot?: string
    /** The caches' store (default: none). */
    cache?: CacheStore
  } = {}
): Promise<TestRun> {
  const engine = options.docker ?? docker
  const runId = values['run-id'] ?? uniqueRunId('it')
  const all: Record<string, string> = {
    path: 'repo',
    dockerfile: 'agent/Dockerfile',
    'timeout-minutes': '2',
    'grace-seconds': '2',
    memory: '256m',
    cpus: '1',
    ...values,
    'run-id': runId
  }
  const inputs = getInputs((n) => (all[n] === '' ? undefined : all[n]), {
    workspace: ws,
    environment: options.environment ?? process.env,
    hostUid: process.getuid?.() ?? 1000,
    event: LOCAL_EVENT,
    hostCpus: os.cpus().length,
    defaultRunId: runId
  })
  const plan = planRun(inputs)
  const log = new MemoryLogger()
  const result = await runPipeline(
    plan,
    { task: inputs.task.text, env: inputs.env },
    {
      runtime: options.runtime ?? new DockerRuntime(testHost, engine),
      log,
      toolEnv: testHost.toolEnv,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.tempRoot !== undefined ? { tempRoot: options.tempRoot } : {}),
      ...(options.cache ? { cache: { store: options.cache } } : {})
    }
  )
  // Every report an integration test produces must validate against schema/report.schema.json.
  const written: unknown = JSON.parse(read(path.join(plan.outputDir, 'report.json')))
  const check = validateReport(written)
  if (!check.valid) throw new Error(`report.json does not validate:\n${check.errors.join('\n')}`)
  return { ...result, log, outputDir: plan.outputDir }
}

/** Containers, networks and volumes still carrying the run's label. */
export async function leftovers(runId: string): Promise<number> {
  const filters = JSON.stringify({ label: [`dev.airlock.run-id=${runId}`] })
  const c = await docker.listContainers({ all: true, filters })
  const n = await docker.listNetworks({ filters })
  const v = await docker.listVolumes({ filters })
  return c.length + n.length + (v.Volumes ?? []).length
}

export function tempDirsOf(runId: string): string[] {
  return fs.readdirSync(os.tmpdir()).filter((d) => d.startsWith(`airlock-${runId}-`))
}

export function read(file: string): string {
  return fs.readFileSync(file, 'utf8')
}

/**
 * Runs a Node script without blocking this process's event loop (servers the test runs in this
 * process, such as API stand-ins, keep answering while it runs).
 */
export function runNode(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv }
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    child.on('error', reject)
    child.on('close', (status) => resolve({ status, stdout, stderr }))
  })
}

/** Polls `check` every `everyMs` until it holds or `ms` have passed; the last answer counts. */
export async function until(check: () => boolean, ms: number, everyMs = 100): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (check()) return true
    await new Promise((r) => setTimeout(r, everyMs))
  }
  return check()
}
