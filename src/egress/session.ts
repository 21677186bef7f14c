// The egress session: the per-run networks and the proxy sidecar, through the runtime's sidecar
// API. The agent joins only the internal network, whose bridge has no address on the host: no
// route to the host's listeners, the engine's API, other containers or the outside; the one peer
// it can reach is the proxy, which listens on that network only.
import * as fs from 'node:fs'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { InfrastructureError, errorMessage } from '../errors.js'
import { LABELS } from '../labels.js'
import type { Network, Runtime, Sidecar } from '../sandbox/types.js'
import { PROXY_HOST, PROXY_PORT, agentEgressEnv } from './env.js'
import { parseProxyLine } from './lines.js'
import type { BudgetLimits } from './budget.js'
import type { CredentialRoute } from './credential-routes.js'
import type { HostMapping, HostRule } from './host-rules.js'
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
  /** max-model-requests / max-model-tokens / max-cost-usd. */
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

export async function startEgress(runtime: Runtime, opts: EgressOptions): Promise<EgressSession> {
  if (!fs.existsSync(opts.proxyScript)) {
    throw new InfrastructureError(
      `the egress proxy bundle ${opts.proxyScript} is missing; build it with npm run build`
    )
  }
  const labels = { ...opts.labels, [LABELS.phase]: 'egress' }
  const created: Network[] = []
  let proxy: Sidecar | undefined
  const removeAll = async (): Promise<void> => {
    await proxy?.stop(0).catch(() => undefined)
    for (const n of created.reverse()) await n.remove().catch(() => undefined)
  }
  try {
    const internal = await runtime.createNetwork({
      name: `airlock-${opts.runId}-internal`,
      labels,
      internal: true
    })
    created.push(internal)
    let upstreamName = opts.upstreamNetwork
    if (upstreamName === undefined) {
      const upstream = await runtime.createNetwork({
        name: `airlock-${opts.runId}-upstream`,
        labels,
        internal: false
      })
      created.push(upstream)
      upstreamName = upstream.name
    }
    proxy = await runtime.startSidecar({
      name: `airlock-${opts.runId}-proxy`,
      image: opts.proxyImage,
      command: ['node', PROXY_SCRIPT_TARGET],
      user: '65534:65534',
      workdir: '/',
      env: ['NODE_ENV=production'],
      labels,
      network: { name: upstreamName },
      networks: [{ name: internal.name, aliases: [PROXY_HOST] }],
      stdin: true,
      limits: { memoryBytes: 256 * 1024 * 1024, cpus: 1, pidsLimit: 64 },
      tmpfs: { '/tmp': 16 * 1024 * 1024 },
      mounts: [{ source: opts.proxyScript, target: PROXY_SCRIPT_TARGET, readOnly: true }],
      sysctls: { 'net.ipv4.ip_forward': '0' }
    })
    const capture = collect(proxy)
    const address = await proxy.address(internal.name)
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
      proxy.input(JSON.stringify(config))
      let timer: NodeJS.Timeout | undefined
      outcome = await Promise.race([
        capture.ready.then(() => 'ready' as const),
        proxy.exited.then(() => 'exited' as const),
        new Promise<'timeout'>(
          (resolve) => (timer = setTimeout(() => resolve('timeout'), READY_TIMEOUT_MS))
        )
      ])
      clearTimeout(timer)
    }
    if (outcome !== 'ready') {
      const exit = await Promise.race([proxy.exited, delay(1000).then(() => undefined)])
      await delay(200)
      if (exit)
        capture.result.stderr += ` (exit code ${exit.exitCode}${exit.error ? `, ${exit.error}` : ''})`
      throw new InfrastructureError(
        `the egress proxy did not start (${outcome}) in image ${opts.proxyImage}: ${capture.result.stderr.trim().slice(0, 2000) || 'no output'}; proxy-image must have node 18 or later on its PATH`
      )
    }
    const running = proxy
    return {
      network: internal.name,
      env: agentEgressEnv(opts.credentials),
      async stop(): Promise<EgressCapture> {
        await running.stop(STOP_GRACE_MS)
        proxy = undefined
        await removeAll()
        return capture.result
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

/** Reads the proxy's output as it comes: the ready line, events and transcript records. */
function collect(proxy: Sidecar): { result: EgressCapture; ready: Promise<number> } {
  const result: EgressCapture = {
    events: [],
    transcript: [],
    overflow: { allowed: 0, denied: 0 },
    stderr: ''
  }
  let transcriptText = 0
  proxy.stderr.on('data', (c: Buffer) => {
    if (result.stderr.length < 64 * 1024) result.stderr += c.toString('utf8')
  })
  let readyResolve: (port: number) => void = () => undefined
  const ready = new Promise<number>((resolve) => (readyResolve = resolve))
  let buffer = ''
  proxy.stdout.on('data', (c: Buffer) => {
    buffer += c.toString('utf8')
    let nl: number
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = parseProxyLine(buffer.slice(0, nl))
      buffer = buffer.slice(nl + 1)
      if (line === undefined) continue
      if (line.type === 'ready') readyResolve(line.port)
      else if (line.type === 'egress') {
        const e = line.event
        if (result.events.length < MAX_EVENTS) result.events.push(e)
        else if (e.allowed) result.overflow.allowed++
        else result.overflow.denied++
      } else {
        const r = line.record
        transcriptText += r.request.body.text.length + r.response.body.text.length
        if (transcriptText > MAX_TRANSCRIPT_TEXT) {
          r.request.body = { ...r.request.body, text: '', truncated: true }
          r.response.body = { ...r.response.body, text: '', truncated: true }
        }
        result.transcript.push(r)
      }
    }
  })
  return { result, ready }
}

/** An awaited pause: referenced, so the process does not exit in the middle of it. */
function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
