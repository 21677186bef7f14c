// Service containers for the test phases, on the runtime's sidecar API: each test-command phase
// (baseline, tests, re-run) gets fresh ones on a network of its own, internal (no route out, no
// address on the host), reachable by name; hardened like every other container; health-checked
// before the phase starts; removed right after it.
import { Writable } from 'node:stream'
import { InfrastructureError, errorMessage } from '../errors.js'
import { LABELS } from '../labels.js'
import type { Network, ResourceLimits, Runtime, Sidecar } from '../sandbox/types.js'
import type { ServiceSpec } from './services-inputs.js'
import type { ServiceReport } from './record.js'

export type { ServiceReport } from './record.js'

export interface ServicesSession {
  /** The network the phase's container joins. */
  network: string
  reports: ServiceReport[]
  stop(): Promise<void>
}

export interface ServicesOptions {
  runId: string
  phase: string
  labels: Record<string, string>
  runtime: string
  limits: ResourceLimits
  services: ServiceSpec[]
  signal?: AbortSignal
  /** Progress lines (an image pulled). */
  log?: (line: string) => void
}

const TMPFS_BYTES = 256 * 1024 * 1024
const HEALTH_TRY_MS = 10_000
const STOP_GRACE_MS = 2_000

/** Starts the services; on any failure what was started is removed and the error carries the reports. */
export async function startServices(
  runtime: Runtime,
  opts: ServicesOptions
): Promise<ServicesSession> {
  const labels = { ...opts.labels, [LABELS.phase]: `services-${opts.phase}` }
  const netName = `airlock-${opts.runId}-svc-${opts.phase}`
  const sidecars: Sidecar[] = []
  let net: Network | undefined
  const stop = async (): Promise<void> => {
    for (const c of sidecars) await c.stop(STOP_GRACE_MS).catch(() => undefined)
    await net?.remove().catch(() => undefined)
  }
  const reports: ServiceReport[] = opts.services.map((s) => ({
    name: s.name,
    image: s.image,
    imageId: s.image,
    phase: opts.phase,
    healthy: false,
    readyMs: null
  }))
  try {
    // Each image on the engine first: a digest-pinned one that is absent is pulled by its digest
    // (through the runtime, as the agent image and the bases are); the ID is what the report keeps.
    for (const [i, s] of opts.services.entries()) {
      const info = await runtime.resolveImage(
        { kind: 'pinned', ref: s.image },
        { info: (line) => opts.log?.(`service ${s.name}: ${line}`) },
        opts.signal ? { signal: opts.signal } : {}
      )
      reports[i].imageId = info.id
    }
    net = await runtime.createNetwork({ name: netName, labels, internal: true })
    for (const s of opts.services) {
      const sidecar = await runtime.startSidecar({
        name: `${netName}-${s.name}`,
        image: s.image,
        command: s.command,
        user: s.user,
        workdir: '/',
        env: Object.entries(s.env).map(([k, v]) => `${k}=${v}`),
        labels: { ...labels, 'dev.airlock.service': s.name },
        network: { name: netName, aliases: [s.name] },
        runtime: opts.runtime,
        limits: opts.limits,
        tmpfs: { '/tmp': TMPFS_BYTES, '/run': TMPFS_BYTES },
        mounts: [],
        sysctls: { 'net.ipv6.conf.all.disable_ipv6': '1' }
      })
      sidecars.push(sidecar)
      // Its output is not kept (services are not evidence); it is drained so it never blocks.
      sidecar.stdout.resume()
      sidecar.stderr.resume()
    }
    await Promise.all(
      opts.services.map(async (s, i) => {
        const started = Date.now()
        const last = await waitHealthy(runtime, opts, netName, s, sidecars[i])
        if (last.ok) {
          reports[i].healthy = true
          reports[i].readyMs = Date.now() - started
          return
        }
        reports[i].detail = last.detail
        throw new InfrastructureError(`service ${s.name} did not become healthy: ${last.detail}`)
      })
    )
    return { network: netName, reports, stop }
  } catch (error) {
    await stop()
    throw Object.assign(error instanceof Error ? error : new Error(errorMessage(error)), {
      serviceReports: reports
    })
  }
}

/**
 * The health command, run in a fresh container of the service's image on the same network (so it
 * reaches the service by name, as the tests will), until it exits 0 or the deadline passes.
 */
async function waitHealthy(
  runtime: Runtime,
  opts: ServicesOptions,
  netName: string,
  s: ServiceSpec,
  sidecar: Sidecar
): Promise<{ ok: true } | { ok: false; detail: string }> {
  const deadline = Date.now() + s.healthTimeoutSeconds * 1000
  let exited: { exitCode: number | null; error?: string } | undefined
  void sidecar.exited.then((e) => (exited = e))
  let detail = 'no health check ran'
  for (let attempt = 1; Date.now() < deadline && !opts.signal?.aborted; attempt++) {
    if (exited?.error !== undefined)
      return { ok: false, detail: `it was lost before it was ready: ${exited.error}` }
    if (exited !== undefined)
      return { ok: false, detail: `it exited with code ${exited.exitCode} before it was ready` }
    let output = ''
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        if (output.length < 4096) output += chunk.toString('utf8')
        done()
      }
    })
    const r = await runtime.runPhase(
      {
        name: `${netName}-${s.name}-health-${attempt}`,
        image: s.image,
        command: ['/bin/sh', '-c', s.health],
        user: s.user,
        workdir: '/',
        env: Object.entries(s.env).map(([k, v]) => `${k}=${v}`),
        labels: { ...opts.labels, [LABELS.phase]: `services-${opts.phase}-health` },
        network: { name: netName },
        runtime: opts.runtime,
        limits: { memoryBytes: 128 * 1024 * 1024, cpus: 0.5, pidsLimit: 64 },
        tmpfs: { '/tmp': 16 * 1024 * 1024 },
        mounts: [],
        sysctls: { 'net.ipv6.conf.all.disable_ipv6': '1' }
      },
      {
        timeoutMs: Math.min(HEALTH_TRY_MS, Math.max(1000, deadline - Date.now())),
        graceMs: 500,
        stdout: sink,
        stderr: sink
      }
    )
    if (r.exitCode === 0 && r.error === undefined) return { ok: true }
    // The engine failed: no later attempt can be trusted; the run ends now.
    if (r.engineFault === true) return { ok: false, detail: `health command lost: ${r.error}` }
    detail =
      r.error !== undefined
        ? `health command could not run: ${r.error}`
        : `health command exited ${r.exitCode}: ${output.slice(-300).trim()}`
    await new Promise((res) => setTimeout(res, 500))
  }
  return { ok: false, detail: `not healthy within ${s.healthTimeoutSeconds} s (last: ${detail})` }
}
