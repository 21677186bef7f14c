// Host side of the egress proxy: the per-run networks and the proxy container, its lifecycle and
// its event stream. The agent joins only the internal network, whose bridge has no address on the
// host (`inhibit_ipv4`): no route to the host's listeners, the Docker API, other containers or
// the outside; the one peer it can reach is the proxy, which listens on that network only.
import * as fs from 'node:fs'
import * as path from 'node:path'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import type Docker from 'dockerode'
import { InfrastructureError, errorMessage } from '../errors.js'
import { LABELS } from '../plan.js'
import { hardenedHostConfig } from '../sandbox/spec.js'
import { PROXY_HOST, PROXY_PORT, agentEgressEnv } from './env.js'
import type { BudgetLimits } from './budget.js'
import type { CredentialRoute, HostMapping, HostRule } from './policy.js'
import type { EgressEvent, ProxyConfig, TranscriptRecord } from './proxy.js'

const PROXY_SCRIPT_TARGET = '/airlock/proxy.js'
const READY_TIMEOUT_MS = 30_000
/** The agent decides how many attempts it makes: what the host keeps of them is bounded. */
export const MAX_EVENTS = 50_000
export const MAX_TRANSCRIPT_TEXT = 64 * 1024 * 1024
const STOP_GRACE_MS = 5_000

export interface EgressOptions {
  runId: string
  labels: Record<string, string>
  /** An image with `node` (18 or later) on its PATH; never the agent's image. */
  proxyImage: string
  /** Host path of the bundled proxy (dist/proxy.cjs), mounted read-only. */
  proxyScript: string
  allow: HostRule[]
  hostMap: HostMapping[]
  credentials: (CredentialRoute & { secret: string })[]
  extraCa?: string
  /** An existing network for the proxy's upstream side; default a new per-run bridge network. */
  upstreamNetwork?: string
  maxRecordBytes?: number
  /** max-model-requests / max-model-tokens. */
  budget?: BudgetLimits
}

export interface EgressSession {
  /** The network the agent container joins (internal, no host address). */
  network: string
  /** Variables for the agent: proxy settings, base URLs and placeholder keys. */
  env: string[]
  /** Stops the proxy and removes its container and the networks it created. */
  stop(): Promise<EgressCapture>
}

export interface EgressCapture {
  /** The first MAX_EVENTS attempts; the rest are only counted in `overflow`. */
  events: EgressEvent[]
  /** Exchanges of credential routes; past MAX_TRANSCRIPT_TEXT bytes of bodies, bodies are dropped. */
  transcript: TranscriptRecord[]
  overflow: { allowed: number; denied: number }
  /** What the proxy wrote on stderr (capped). */
  stderr: string
}

/** dist/proxy.cjs, next to the running bundle (dist/index.js, dist/cli.js). */
export function defaultProxyScript(): string {
  return path.join(path.dirname(fileURLToPath(import.meta.url)), 'proxy.cjs')
}

export async function startEgress(docker: Docker, opts: EgressOptions): Promise<EgressSession> {
  if (!fs.existsSync(opts.proxyScript)) {
    throw new InfrastructureError(
      `the egress proxy bundle ${opts.proxyScript} is missing; build it with npm run build`
    )
  }
  const labels = { ...opts.labels, [LABELS.phase]: 'egress' }
  const created: Docker.Network[] = []
  let container: Docker.Container | undefined
  const removeAll = async (): Promise<void> => {
    await container?.remove({ force: true, v: true }).catch(() => undefined)
    for (const n of created.reverse()) await n.remove().catch(() => undefined)
  }
  try {
    const internalName = `airlock-${opts.runId}-internal`
    created.push(
      await docker.createNetwork({
        Name: internalName,
        Driver: 'bridge',
        Internal: true,
        CheckDuplicate: true,
        // No address for the bridge on the host: an internal bridge with an address lets every
        // container on it reach the host's listeners (and through them, the rest of the host).
        Options: {
          'com.docker.network.bridge.inhibit_ipv4': 'true',
          'com.docker.network.bridge.enable_icc': 'true'
        },
        Labels: labels
      })
    )
    let upstreamName = opts.upstreamNetwork
    if (upstreamName === undefined) {
      upstreamName = `airlock-${opts.runId}-upstream`
      created.push(
        await docker.createNetwork({
          Name: upstreamName,
          Driver: 'bridge',
          CheckDuplicate: true,
          Labels: labels
        })
      )
    }
    container = await docker.createContainer({
      name: `airlock-${opts.runId}-proxy`,
      Image: opts.proxyImage,
      Entrypoint: [],
      Cmd: ['node', PROXY_SCRIPT_TARGET],
      User: '65534:65534',
      WorkingDir: '/',
      Env: ['NODE_ENV=production'],
      Labels: labels,
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      OpenStdin: true,
      StdinOnce: true,
      Tty: false,
      HostConfig: {
        ...hardenedHostConfig({ memoryBytes: 256 * 1024 * 1024, cpus: 1, pidsLimit: 64 }),
        NetworkMode: upstreamName,
        Tmpfs: { '/tmp': 'rw,noexec,nosuid,nodev,size=16m' },
        Mounts: [
          { Type: 'bind', Source: opts.proxyScript, Target: PROXY_SCRIPT_TARGET, ReadOnly: true }
        ],
        Sysctls: { 'net.ipv4.ip_forward': '0' }
      }
    })
    await docker
      .getNetwork(internalName)
      .connect({ Container: container.id, EndpointConfig: { Aliases: [PROXY_HOST] } })

    const stream = (await container.attach({
      stream: true,
      stdin: true,
      stdout: true,
      stderr: true,
      hijack: true
    })) as NodeJS.ReadWriteStream
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    docker.modem.demuxStream(stream, stdout, stderr)
    const streamEnded = new Promise<void>((resolve) => {
      stream.on('end', resolve)
      stream.on('close', resolve)
      stream.on('error', () => resolve())
    })
    const capture: EgressCapture = {
      events: [],
      transcript: [],
      overflow: { allowed: 0, denied: 0 },
      stderr: ''
    }
    let transcriptText = 0
    stderr.on('data', (c: Buffer) => {
      if (capture.stderr.length < 64 * 1024) capture.stderr += c.toString('utf8')
    })
    let readyResolve: (v: { port: number }) => void = () => undefined
    const ready = new Promise<{ port: number }>((resolve) => (readyResolve = resolve))
    let buffer = ''
    stdout.on('data', (c: Buffer) => {
      buffer += c.toString('utf8')
      let nl: number
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl)
        buffer = buffer.slice(nl + 1)
        let event: { type?: string; port?: number }
        try {
          event = JSON.parse(line) as { type?: string; port?: number }
        } catch {
          continue
        }
        if (event.type === 'ready') readyResolve({ port: event.port ?? 0 })
        else if (event.type === 'egress') {
          const e = event as EgressEvent
          if (capture.events.length < MAX_EVENTS) capture.events.push(e)
          else if (e.allowed) capture.overflow.allowed++
          else capture.overflow.denied++
        } else if (event.type === 'transcript') {
          const r = event as TranscriptRecord
          transcriptText += r.request.body.text.length + r.response.body.text.length
          if (transcriptText > MAX_TRANSCRIPT_TEXT) {
            r.request.body = { ...r.request.body, text: '', truncated: true }
            r.response.body = { ...r.response.body, text: '', truncated: true }
          }
          capture.transcript.push(r)
        }
      }
    })
    // `next-exit`: the default condition (`not-running`) answers at once for a created container.
    const exited = container.wait({ condition: 'next-exit' })
    await container.start()
    const info = await container.inspect()
    const address = info.State.Running
      ? info.NetworkSettings.Networks[internalName]?.IPAddress
      : undefined
    let outcome: 'ready' | 'exited' | 'timeout' = 'exited'
    if (address) {
      const config: ProxyConfig = {
        listen: { host: address, port: PROXY_PORT },
        allow: opts.allow,
        hostMap: opts.hostMap,
        credentials: opts.credentials,
        ...(opts.extraCa !== undefined ? { extraCa: opts.extraCa } : {}),
        selfNames: [PROXY_HOST],
        maxRecordBytes: opts.maxRecordBytes ?? 1024 * 1024,
        ...(opts.budget ? { budget: opts.budget } : {})
      }
      stream.end(JSON.stringify(config))
      let timer: NodeJS.Timeout | undefined
      outcome = await Promise.race([
        ready.then(() => 'ready' as const),
        exited.then(() => 'exited' as const),
        new Promise<'timeout'>(
          (resolve) => (timer = setTimeout(() => resolve('timeout'), READY_TIMEOUT_MS))
        )
      ])
      clearTimeout(timer)
    }
    if (outcome !== 'ready') {
      await Promise.race([streamEnded, delay(1000)])
      const state = (await container.inspect().catch(() => undefined))?.State
      if (state && !state.Running)
        capture.stderr += ` (exit code ${state.ExitCode}${state.Error ? `, ${state.Error}` : ''})`
      throw new InfrastructureError(
        `the egress proxy did not start (${outcome}) in image ${opts.proxyImage}: ${capture.stderr.trim().slice(0, 2000) || 'no output'}; proxy-image must have node 18 or later on its PATH`
      )
    }
    const proxyContainer = container
    return {
      network: internalName,
      env: agentEgressEnv(opts.credentials),
      async stop(): Promise<EgressCapture> {
        await proxyContainer.kill({ signal: 'SIGTERM' }).catch(() => undefined)
        const gone = await Promise.race([
          exited.then(() => true),
          delay(STOP_GRACE_MS).then(() => false)
        ])
        if (!gone) await proxyContainer.kill({ signal: 'SIGKILL' }).catch(() => undefined)
        await Promise.race([streamEnded, delay(STOP_GRACE_MS)])
        await removeAll()
        return capture
      }
    }
  } catch (error) {
    await removeAll()
    if (error instanceof InfrastructureError) throw error
    throw new InfrastructureError(`could not start the egress proxy: ${errorMessage(error)}`, {
      cause: error
    })
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
