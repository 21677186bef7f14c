// Service containers for the test phases: each test-command phase (baseline, tests, re-run) gets
// fresh ones on a network of its own, internal (no route out, no address on the host), reachable
// by name; hardened like every other container; health-checked before the phase starts; removed
// right after it.
import { PassThrough } from 'node:stream'
import type Docker from 'dockerode'
import { ConfigurationError, InfrastructureError, errorMessage } from '../errors.js'
import { LABELS } from '../plan.js'
import { hardenedHostConfig } from '../sandbox/spec.js'
import type { ServiceSpec } from './inputs.js'

export interface ServiceReport {
  name: string
  image: string
  /** The image ID it ran from. */
  imageId: string | null
  phase: string
  healthy: boolean
  /** Milliseconds from start until the health command passed. */
  readyMs: number | null
  detail?: string
}

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
  limits: { memoryBytes: number; cpus: number; pidsLimit: number }
  services: ServiceSpec[]
  signal?: AbortSignal
}

const TMPFS = 'rw,noexec,nosuid,nodev,size=268435456,mode=1777'
const HEALTH_EXEC_MS = 10_000

export async function startServices(
  docker: Docker,
  opts: ServicesOptions
): Promise<ServicesSession> {
  const labels = { ...opts.labels, [LABELS.phase]: `services-${opts.phase}` }
  const netName = `airlock-${opts.runId}-svc-${opts.phase}`
  const containers: Docker.Container[] = []
  let net: Docker.Network | undefined
  const stop = async (): Promise<void> => {
    for (const c of containers) await c.remove({ force: true, v: true }).catch(() => undefined)
    await net?.remove().catch(() => undefined)
  }
  const reports: ServiceReport[] = []
  try {
    net = await docker.createNetwork({
      Name: netName,
      Driver: 'bridge',
      Internal: true,
      CheckDuplicate: true,
      Labels: labels,
      Options: { 'com.docker.network.bridge.inhibit_ipv4': 'true' }
    })
    for (const s of opts.services) {
      const image = await docker
        .getImage(s.image)
        .inspect()
        .catch((error: unknown) => {
          throw new InfrastructureError(
            `service ${s.name}: image ${s.image} is not available to the daemon (${errorMessage(error)}); pull or load it first`
          )
        })
      const imageUser = image.Config?.User ?? ''
      const user = s.user ?? imageUser
      if (user === '' || /^(0|root)(:|$)/.test(user))
        throw new ConfigurationError(
          'services',
          `${s.name}: the image runs as root; set user: to a non-root uid[:gid] it can run as`
        )
      const c = await docker.createContainer({
        name: `${netName}-${s.name}`,
        Image: image.Id,
        ...(s.command !== undefined ? { Cmd: s.command } : {}),
        User: user,
        Env: Object.entries(s.env).map(([k, v]) => `${k}=${v}`),
        Labels: { ...labels, 'dev.airlock.service': s.name },
        HostConfig: {
          ...hardenedHostConfig(opts.limits),
          Runtime: opts.runtime,
          NetworkMode: netName,
          Sysctls: { 'net.ipv6.conf.all.disable_ipv6': '1' },
          Tmpfs: { '/tmp': TMPFS, '/run': TMPFS }
        },
        NetworkingConfig: { EndpointsConfig: { [netName]: { Aliases: [s.name] } } }
      })
      containers.push(c)
      await c.start()
      reports.push({
        name: s.name,
        image: s.image,
        imageId: image.Id,
        phase: opts.phase,
        healthy: false,
        readyMs: null
      })
    }
    // Health: each service's command until it passes, all in parallel, each within its deadline.
    await Promise.all(
      opts.services.map(async (s, i) => {
        const started = Date.now()
        const r = reports[i]
        const last = await waitHealthy(containers[i], s, opts.signal)
        if (last.ok) {
          r.healthy = true
          r.readyMs = Date.now() - started
        } else {
          r.detail = last.detail
          throw new InfrastructureError(`service ${s.name} did not become healthy: ${last.detail}`)
        }
      })
    )
    return { network: netName, reports, stop }
  } catch (error) {
    await stop()
    throw Object.assign(error instanceof Error ? error : new Error(String(error)), {
      serviceReports: reports
    })
  }
}

async function waitHealthy(
  c: Docker.Container,
  s: ServiceSpec,
  signal?: AbortSignal
): Promise<{ ok: true } | { ok: false; detail: string }> {
  const deadline = Date.now() + s.healthTimeoutSeconds * 1000
  let detail = 'no health check ran'
  while (Date.now() < deadline && !signal?.aborted) {
    const state = (await c.inspect()).State
    if (!state.Running)
      return { ok: false, detail: `it exited with code ${state.ExitCode} before it was ready` }
    try {
      const r = await execCapture(c, ['/bin/sh', '-c', s.health])
      if (r.exitCode === 0) return { ok: true }
      detail = `health command exited ${r.exitCode}: ${r.output.slice(-300).trim()}`
    } catch (error) {
      detail = `health command could not run: ${errorMessage(error)}`
    }
    await new Promise((res) => setTimeout(res, 500))
  }
  return { ok: false, detail: `not healthy within ${s.healthTimeoutSeconds} s (last: ${detail})` }
}

async function execCapture(
  c: Docker.Container,
  cmd: string[]
): Promise<{ exitCode: number | null; output: string }> {
  const exec = await c.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true })
  const stream = (await exec.start({ hijack: true, stdin: false })) as NodeJS.ReadableStream
  let output = ''
  const sink = new PassThrough()
  sink.on('data', (d: Buffer) => {
    if (output.length < 4096) output += d.toString('utf8')
  })
  c.modem.demuxStream(stream, sink, sink)
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    new Promise<void>((resolve) => {
      stream.on('end', resolve)
      stream.on('close', resolve)
      stream.on('error', () => resolve())
    }),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, HEALTH_EXEC_MS)))
  ])
  clearTimeout(timer)
  const info = await exec.inspect()
  return { exitCode: info.Running ? null : info.ExitCode, output }
}
