// The egress stage: the proxy session around the agent phase, and its evidence afterwards.
import { performance } from 'node:perf_hooks'
import { InfrastructureError, errorMessage } from '../errors.js'
import { routesWithSecrets } from '../egress/plan.js'
import type { EgressSecrets } from '../egress/plan.js'
import { summarizeEgress, writeEgressEvidence } from '../egress/evidence.js'
import type { EgressSummary } from '../egress/evidence.js'
import { buildLedger } from '../egress/ledger.js'
import { isTelemetryHost } from '../egress/telemetry.js'
import { defaultProxyScript, startEgress } from '../egress/session.js'
import type { EgressSession } from '../egress/session.js'
import type { Logger } from '../log.js'
import type { RunPlan } from '../plan.js'
import type { Runtime } from '../sandbox/types.js'

/** Starts the egress proxy when the plan says allowlist (before the agent, which needs it). */
export async function openEgress(
  plan: RunPlan,
  secrets: EgressSecrets | undefined,
  deps: { runtime: Runtime; log: Logger; proxyScript?: string }
): Promise<EgressSession | undefined> {
  const e = plan.egress
  if (!e) return undefined
  return deps.log.group('egress', async () => {
    // A digest-pinned proxy image (the default one) is pulled when the engine lacks it.
    if (e.proxyImage.includes('@')) {
      await deps.runtime
        .resolveImage({ kind: 'pinned', ref: e.proxyImage }, deps.log)
        .catch((error: unknown) => {
          throw new InfrastructureError(
            `proxy-image: ${errorMessage(error)}; where no registry is reachable, give proxy-image as a local image ID with node 18 or later (scripts/prepare-images.sh node builds one)`,
            { cause: error }
          )
        })
    }
    const session = await startEgress(deps.runtime, {
      runId: plan.runId,
      labels: plan.labels,
      proxyImage: e.proxyImage,
      proxyScript: deps.proxyScript ?? defaultProxyScript(),
      allow: e.allowHosts,
      hostMap: e.hostMap,
      credentials: routesWithSecrets(e, secrets),
      ...(secrets?.upstreamCa !== undefined ? { extraCa: secrets.upstreamCa } : {}),
      ...(e.proxyNetwork !== null ? { upstreamNetwork: e.proxyNetwork } : {}),
      budget: e.budget
    })
    deps.log.info(
      `egress proxy up: ${e.allowHosts.length} allowed host rule(s), ${e.credentials.length} credential route(s)`
    )
    return session
  })
}

/** Stops the proxy, writes egress.jsonl / transcript.jsonl, and summarizes what it saw. */
export async function closeEgress(
  session: EgressSession,
  plan: RunPlan,
  secrets: EgressSecrets | undefined,
  log: Logger
): Promise<EgressSummary> {
  const capture = await session.stop()
  const out = plan.outputDir
  const secretValues = Object.values(secrets?.credentials ?? {})
  await writeEgressEvidence(out, capture.events, capture.transcript, secretValues)
  const summary = summarizeEgress(
    capture.events,
    capture.transcript,
    capture.overflow,
    plan.egress?.budget
  )
  const routes = plan.egress?.credentials ?? []
  summary.ledger = buildLedger(
    capture.events,
    plan.egress?.allowHosts ?? [],
    plan.egress?.groups ?? [],
    routes,
    (host) => isTelemetryHost(plan.preset, host)
  )
  if (routes.length > 0)
    summary.credentialHosts = [...new Set(routes.map((r) => new URL(r.upstream).hostname))].sort()
  log.info(
    `egress: ${summary.allowed} allowed, ${summary.denied} denied` +
      (summary.deniedHosts.length > 0 ? ` (denied: ${summary.deniedHosts.join(', ')})` : '')
  )
  return summary
}

/** How a container reaches the egress proxy: the session's network and the proxy variables. */
export interface EgressRoute {
  network: string
  env: string[]
}

/**
 * The run's egress session, owned by the pipeline's one scope: opened once (alongside the other
 * startup steps), stopped once — after the agent phase, or when the run ends before it — and its
 * summary the stage's record. `stop` may be called again: it answers the same summary.
 */
export class EgressScope {
  private session: EgressSession | undefined
  private stopped: Promise<EgressSummary | undefined> | undefined

  constructor(
    private readonly plan: RunPlan,
    private readonly secrets: EgressSecrets | undefined,
    private readonly deps: { runtime: Runtime; log: Logger; proxyScript?: string }
  ) {}

  /** Starts the proxy when the plan says allowlist: how long it took (ms), or undefined. */
  async open(log: Logger): Promise<number | undefined> {
    if (this.session !== undefined || this.stopped !== undefined)
      throw new Error('the egress session is opened once')
    const start = performance.now()
    this.session = await openEgress(this.plan, this.secrets, { ...this.deps, log })
    return this.session ? Math.round(performance.now() - start) : undefined
  }

  /** What the agent's container joins; undefined without a session. */
  get route(): EgressRoute | undefined {
    return this.session ? { network: this.session.network, env: this.session.env } : undefined
  }

  /** Stops the proxy and writes its evidence (once); the summary, undefined without a session. */
  stop(): Promise<EgressSummary | undefined> {
    const session = this.session
    this.stopped ??= session
      ? closeEgress(session, this.plan, this.secrets, this.deps.log)
      : Promise.resolve(undefined)
    return this.stopped
  }
}
