// The Kubernetes backend of the runtime boundary: the only code that imports
// @kubernetes/client-node. A phase is a Pod (manifests.ts), a network a NetworkPolicy, a sidecar a
// Pod with a headless Service per name; every manifest passes the security check (hardening.ts)
// before it is sent. The host folders of a phase travel as tar through the API server.
import * as fs from 'node:fs'
import { PassThrough } from 'node:stream'
import type { Writable } from 'node:stream'
import {
  ApiException,
  ApisApi,
  Attach,
  CoreV1Api,
  Exec,
  KubeConfig,
  Log,
  NetworkingV1Api,
  NodeV1Api,
  VersionApi
} from '@kubernetes/client-node'
import type { V1NetworkPolicy, V1Pod, V1Service } from '@kubernetes/client-node'
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js'
import { ConfigurationError, InfrastructureError, errorMessage } from '../../errors.js'
import { LABELS } from '../../labels.js'
import type { ImagePlan } from '../../plan.js'
import type {
  ContainerSpec,
  EngineFacts,
  MountSpec,
  ImageInfo,
  ImageLog,
  Network,
  NetworkSpec,
  PhaseResult,
  RunOptions,
  Runtime,
  Sidecar,
  SidecarSpec
} from '../types.js'
import { packMounts, unpackInto } from './copy.js'
import { PINNED_IMAGE, podViolations, policyViolations } from './hardening.js'
import {
  COPY_IN,
  COPY_OUT,
  IO_ROOT,
  MAIN,
  copiedMounts,
  denyAllPolicy,
  networkPolicy,
  networksOf,
  podManifest,
  serviceManifest
} from './manifests.js'
import type { CopiedMount, PodTarget } from './manifests.js'
import { labelValue } from './names.js'
import { delay, followPod, podState } from './pods.js'
import type { PodState } from './pods.js'

export { PINNED_IMAGE } from './hardening.js'
export { RUNTIME_CLASSES, runtimeClassOf } from './runtime-classes.js'
import { RUNTIME_CLASSES, runtimeClassOf } from './runtime-classes.js'

/**
 * API groups of network plugins that enforce NetworkPolicy. The API shows which plugin runs, not
 * that it enforces: a cluster with none of them is refused (fail closed), see docs/kubernetes.md.
 */
export const ENFORCING_GROUPS: Readonly<Record<string, string>> = {
  'crd.projectcalico.org': 'Calico',
  'projectcalico.org': 'Calico',
  'cilium.io': 'Cilium',
  'crd.antrea.io': 'Antrea',
  'policy.networking.k8s.io': 'a plugin implementing AdminNetworkPolicy'
}

export interface KubernetesOptions {
  /** The namespace the run's objects go to (the sandbox namespace). */
  namespace: string
  /** `workspace-size`: the bound of every copied folder. */
  copySizeBytes: number
  /** Bounds of what a read-back may write on the host. */
  readBack?: { maxBytes: number; maxEntries: number }
}

/** Loads in-cluster credentials when running in a pod, else the kubeconfig (KUBECONFIG or ~/.kube). */
export function loadKubeConfig(kubeconfig?: string): KubeConfig {
  const kc = new KubeConfig()
  if (kubeconfig !== undefined) kc.loadFromFile(kubeconfig)
  else kc.loadFromDefault()
  return kc
}

/** The namespace named, else the kubeconfig context's (in a pod: its own), else `default`. */
export function kubeNamespace(kc: KubeConfig, named: string | null): string {
  if (named !== null) return named
  return kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default'
}

function status(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined
}

/** An error of the API server (or no answer) as the run's infrastructure error. */
function apiFault(what: string, error: unknown): InfrastructureError {
  return new InfrastructureError(
    `the Kubernetes API server failed ${what}: ${errorMessage(error).slice(0, 500)}`,
    { cause: error }
  )
}

/** The typed body client-node serializes, checked to serialize back to exactly the manifest. */
function typed<T>(manifest: object, type: string): T {
  const model = ObjectSerializer.deserialize(manifest, type, '') as T
  const back: unknown = ObjectSerializer.serialize(model, type, '')
  if (JSON.stringify(sortKeys(back)) !== JSON.stringify(sortKeys(manifest))) {
    throw new Error(`the ${type} manifest would not reach the API server as written`)
  }
  return model
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k]
      if (v !== undefined) out[k] = sortKeys(v)
    }
    return out
  }
  return value
}

interface Peer {
  ip: string
  aliases: string[]
}

export class KubernetesRuntime implements Runtime {
  private readonly core: CoreV1Api
  private readonly net: NetworkingV1Api
  private readonly nodeApi: NodeV1Api
  private readonly ns: string
  /** Runs whose deny-all policy exists. */
  private readonly guarded = new Set<string>()
  /** The names sidecars answer to, by network (written to the phase pods' /etc/hosts). */
  private readonly peers = new Map<string, Peer[]>()

  constructor(
    private readonly kc: KubeConfig,
    private readonly options: KubernetesOptions
  ) {
    this.core = kc.makeApiClient(CoreV1Api)
    this.net = kc.makeApiClient(NetworkingV1Api)
    this.nodeApi = kc.makeApiClient(NodeV1Api)
    this.ns = options.namespace
  }

  /**
   * The API server answers, the namespace exists and its pods can be listed, the RuntimeClass of
   * the tier exists (no fallback), and a NetworkPolicy-enforcing network plugin is installed.
   */
  async preflight(runtime: string): Promise<void> {
    try {
      await this.core.listNamespacedPod({ namespace: this.ns, limit: 1 })
    } catch (error) {
      const code = status(error)
      if (code === 404)
        throw new ConfigurationError(
          'kubernetes-namespace',
          `namespace "${this.ns}" does not exist in the cluster; create it (docs/runner-scale-sets.md) or name another`
        )
      if (code === 401 || code === 403)
        throw new ConfigurationError(
          'kubernetes-namespace',
          `the credentials may not list pods in namespace "${this.ns}" (HTTP ${code}); bind the Role of docs/runner-scale-sets.md`
        )
      throw apiFault('to answer', error)
    }
    const cls = runtimeClassOf(runtime)
    if (cls !== null) {
      try {
        await this.nodeApi.readRuntimeClass({ name: cls })
      } catch (error) {
        if (status(error) === 404)
          throw new ConfigurationError(
            'runtime',
            `the cluster has no RuntimeClass "${cls}" (for runtime ${runtime}); install it (docs/runner-scale-sets.md) or choose another runtime: the run does not fall back to a weaker one`
          )
        throw apiFault(`to read RuntimeClass ${cls}`, error)
      }
    }
    let groups: string[]
    try {
      const list = await this.kc.makeApiClient(ApisApi).getAPIVersions()
      groups = list.groups.map((g) => g.name)
    } catch (error) {
      throw apiFault('to list its API groups', error)
    }
    if (!groups.some((g) => g in ENFORCING_GROUPS)) {
      throw new ConfigurationError(
        'engine',
        `the cluster shows no network plugin that enforces NetworkPolicy (looked for the API groups of ${[...new Set(Object.values(ENFORCING_GROUPS))].join(', ')}): a sandbox pod could reach anything, so the run is refused; install one (docs/runner-scale-sets.md)`
      )
    }
  }

  async engineFacts(): Promise<EngineFacts> {
    try {
      const v = await this.kc.makeApiClient(VersionApi).getCode()
      return { version: v.gitVersion, apiVersion: `${v.major}.${v.minor}`, os: v.platform }
    } catch (error) {
      if (status(error) !== undefined) return { version: null, apiVersion: null, os: null }
      throw apiFault('to tell its version', error)
    }
  }

  /** No build on the cluster: only an image pinned by digest, pulled by the node. */
  resolveImage(plan: ImagePlan, _log: ImageLog): Promise<ImageInfo> {
    if (plan.kind === 'build') {
      return Promise.reject(
        new ConfigurationError(
          'dockerfile',
          'engine: kubernetes builds no image on the cluster; give image: name@sha256:<digest> (built and pushed elsewhere, pullable by the cluster)'
        )
      )
    }
    if (!PINNED_IMAGE.test(plan.ref)) {
      return Promise.reject(
        new ConfigurationError(
          'image',
          `"${plan.ref}" is not pinned by digest; with engine: kubernetes every image must be name@sha256:<digest>`
        )
      )
    }
    return Promise.resolve({
      ref: plan.ref,
      id: plan.ref,
      baseDigests: [],
      cached: false,
      warnings: []
    })
  }

  /** The tiers' RuntimeClasses the cluster has (gVisor's serves networked runs too). */
  async ociRuntimes(): Promise<Record<string, { runtimeArgs: string[] }>> {
    const out: Record<string, { runtimeArgs: string[] }> = { runc: { runtimeArgs: [] } }
    for (const [runtime, cls] of Object.entries(RUNTIME_CLASSES)) {
      if (cls === null) continue
      try {
        await this.nodeApi.readRuntimeClass({ name: cls })
        out[runtime] = { runtimeArgs: [] }
      } catch (error) {
        if (status(error) !== 404) throw apiFault(`to read RuntimeClass ${cls}`, error)
      }
    }
    return out
  }

  async createNetwork(spec: NetworkSpec): Promise<Network> {
    const runId = runOf(spec.labels)
    await this.guard(runId, spec.labels)
    const manifest = networkPolicy(spec, runId, this.ns)
    await this.createPolicy(manifest, runId)
    const name = manifest.metadata?.name ?? ''
    return {
      name: spec.name,
      remove: async () => {
        this.peers.delete(spec.name)
        await this.net
          .deleteNamespacedNetworkPolicy({ name, namespace: this.ns })
          .catch(ignoreMissing)
      }
    }
  }

  async runPhase(spec: ContainerSpec, options: RunOptions): Promise<PhaseResult> {
    const started = Date.now()
    const result: PhaseResult = {
      exitCode: null,
      timedOut: false,
      oomKilled: false,
      cancelled: false,
      durationMs: 0
    }
    const graceSeconds = Math.max(1, Math.ceil(options.graceMs / 1000))
    let pod: Pod | undefined
    try {
      const runId = runOf(spec.labels)
      await this.guard(runId, spec.labels)
      pod = await this.createPod(
        spec,
        Math.ceil(options.timeoutMs / 1000) + graceSeconds,
        graceSeconds
      )
      const running = pod
      const startedState = await running.copyIn(options.signal)
      if (startedState.kind === 'failed' || startedState.kind === 'gone') {
        return fail(result, started, describe(startedState), true)
      }
      // The output of the phase's container from its start (stdout and stderr as one stream).
      const logs = running.logs(options.stdout)
      let timer: NodeJS.Timeout | undefined
      const deadline = new AbortController()
      timer = setTimeout(() => deadline.abort(), options.timeoutMs)
      const stop = AbortSignal.any([deadline.signal, ...(options.signal ? [options.signal] : [])])
      const end = await running.follow((s) => s.kind === 'exited' || s.kind === 'failed', stop)
      clearTimeout(timer)
      timer = undefined
      if (end.kind === 'exited') {
        await logs
        result.exitCode = end.exitCode
        result.oomKilled = end.reason === 'OOMKilled'
        if (spec.mounts.some((m) => !m.readOnly)) await running.readBack()
      } else if (end.kind === 'failed' && end.reason === 'DeadlineExceeded') {
        result.timedOut = true
        // As with Docker, a timeout is not an error of the engine. The writable folders are not
        // read back (the pod is gone): the host keeps what they held before the phase.
      } else if (end.kind === 'failed' && end.reason === 'Evicted') {
        result.error = `the cluster evicted the pod: ${end.message}`
      } else if (end.kind === 'failed' || end.kind === 'gone') {
        return fail(result, started, describe(end), true)
      } else {
        // Our deadline or a cancellation: the pod is deleted with the grace period (TERM, KILL).
        result.timedOut = deadline.signal.aborted
        result.cancelled = !result.timedOut
        await running.remove(graceSeconds)
        const after = await running.lastState()
        if (after.kind === 'exited') {
          result.exitCode = after.exitCode
          result.oomKilled = after.reason === 'OOMKilled'
        }
      }
    } catch (error) {
      result.error = errorMessage(error)
      result.engineFault = !(error instanceof ConfigurationError)
    } finally {
      await pod?.remove(0).catch((e: unknown) => {
        result.error ??= `the pod was not removed: ${errorMessage(e)}`
      })
      result.durationMs = Date.now() - started
    }
    return result
  }

  async startSidecar(spec: SidecarSpec): Promise<Sidecar> {
    const runId = runOf(spec.labels)
    await this.guard(runId, spec.labels)
    const pod = await this.createPod(spec, 24 * 3600, 2)
    const services: string[] = []
    try {
      const state = await pod.copyIn()
      if (state.kind !== 'running') throw new Error(describe(state))
      const ip = state.ip
      if (ip === undefined) throw new Error('the sidecar pod has no address')
      for (const n of networksOf(spec)) {
        for (const alias of n.aliases) {
          const svc = serviceManifest(spec, n.name, alias, this.ns)
          await this.core.createNamespacedService({
            namespace: this.ns,
            body: typed<V1Service>(svc, 'V1Service')
          })
          services.push(svc.metadata?.name ?? '')
        }
        if (n.aliases.length > 0) {
          const list = this.peers.get(n.name) ?? []
          list.push({ ip, aliases: n.aliases })
          this.peers.set(n.name, list)
        }
      }
      const stdout = new PassThrough()
      const stderr = new PassThrough()
      const stdin = new PassThrough()
      const ws = (await new Attach(this.kc).attach(
        this.ns,
        pod.name,
        MAIN,
        stdout,
        stderr,
        spec.stdin === true ? stdin : null,
        false
      )) as unknown as Socket
      const exited = pod
        .follow((s) => s.kind === 'exited' || s.kind === 'failed')
        .then((s) =>
          s.kind === 'exited' ? { exitCode: s.exitCode } : { exitCode: null, error: describe(s) }
        )
        .catch((e: unknown) => ({ exitCode: null, error: errorMessage(e) }))
      return {
        stdout,
        stderr,
        exited,
        input: (data) => stdin.end(data),
        address: async () => {
          const s = await pod.lastState()
          return s.kind === 'running' ? s.ip : undefined
        },
        stop: async (graceMs) => {
          for (const list of this.peers.values()) {
            const i = list.findIndex((p) => p.ip === ip)
            if (i >= 0) list.splice(i, 1)
          }
          await pod.remove(Math.ceil(graceMs / 1000))
          await Promise.race([exited, delay(graceMs + 5000)])
          ws.close()
          stdout.end()
          stderr.end()
          for (const s of services)
            await this.core
              .deleteNamespacedService({ name: s, namespace: this.ns })
              .catch(ignoreMissing)
        }
      }
    } catch (error) {
      await pod.remove(0).catch(() => undefined)
      for (const s of services)
        await this.core
          .deleteNamespacedService({ name: s, namespace: this.ns })
          .catch(ignoreMissing)
      throw error
    }
  }

  /** Deletes every pod, service and policy carrying the run's label. */
  async cleanup(runId: string): Promise<{ containers: number; networks: number; volumes: number }> {
    const labelSelector = `${LABELS.runId}=${labelValue(runId)}`
    const namespace = this.ns
    let containers = 0
    let networks = 0
    try {
      for (const p of (await this.core.listNamespacedPod({ namespace, labelSelector })).items) {
        if (
          await gone(
            this.core.deleteNamespacedPod({
              name: p.metadata?.name ?? '',
              namespace,
              gracePeriodSeconds: 0
            })
          )
        )
          containers++
      }
      for (const s of (await this.core.listNamespacedService({ namespace, labelSelector })).items) {
        if (
          await gone(this.core.deleteNamespacedService({ name: s.metadata?.name ?? '', namespace }))
        )
          networks++
      }
      for (const p of (await this.net.listNamespacedNetworkPolicy({ namespace, labelSelector }))
        .items) {
        if (
          await gone(
            this.net.deleteNamespacedNetworkPolicy({ name: p.metadata?.name ?? '', namespace })
          )
        )
          networks++
      }
    } catch (error) {
      throw apiFault(`to clean up run ${runId}`, error)
    }
    this.guarded.delete(runId)
    return { containers, networks, volumes: 0 }
  }

  /** The run's deny-all policy, once, before its first pod. */
  private async guard(runId: string, labels: Record<string, string>): Promise<void> {
    if (this.guarded.has(runId)) return
    await this.createPolicy(denyAllPolicy(runId, this.ns, labels), runId, true)
    this.guarded.add(runId)
  }

  private async createPolicy(
    manifest: V1NetworkPolicyWire,
    runId: string,
    exists = false
  ): Promise<void> {
    const violations = policyViolations(manifest, labelValue(runId))
    if (violations.length > 0) throw new Error(`refused to send a policy: ${violations.join('; ')}`)
    try {
      await this.net.createNamespacedNetworkPolicy({
        namespace: this.ns,
        body: typed<V1NetworkPolicy>(manifest, 'V1NetworkPolicy')
      })
    } catch (error) {
      if (exists && status(error) === 409) return
      throw error
    }
  }

  private async createPod(
    spec: ContainerSpec | SidecarSpec,
    deadlineSeconds: number,
    graceSeconds: number
  ): Promise<Pod> {
    const hostAliases = networksOf(spec).flatMap((n) =>
      (this.peers.get(n.name) ?? []).map((p) => ({ ip: p.ip, hostnames: p.aliases }))
    )
    const target: PodTarget = {
      namespace: this.ns,
      runtimeClassName: runtimeClassOf(spec.runtime ?? 'runc'),
      deadlineSeconds,
      terminationGraceSeconds: graceSeconds,
      copySizeBytes: this.options.copySizeBytes,
      hostAliases
    }
    const mounts = copiedMounts(spec, (s) => fs.statSync(s).isFile())
    const manifest = podManifest(spec, target, mounts)
    const violations = podViolations(manifest)
    if (violations.length > 0) throw new Error(`refused to send a pod: ${violations.join('; ')}`)
    await this.core.createNamespacedPod({
      namespace: this.ns,
      body: typed<V1Pod>(manifest, 'V1Pod')
    })
    return new Pod(
      this.kc,
      this.core,
      this.ns,
      manifest.metadata?.name ?? '',
      spec.mounts,
      mounts,
      this.options
    )
  }
}

/** What the backend uses of client-node's WebSocket. */
interface Socket {
  close(): void
  once(event: 'close', listener: () => void): unknown
}

type V1NetworkPolicyWire = ReturnType<typeof networkPolicy>

/** One pod of the run: copy in, follow, logs, read back, remove. */
class Pod {
  private removed = false

  constructor(
    private readonly kc: KubeConfig,
    private readonly core: CoreV1Api,
    private readonly ns: string,
    readonly name: string,
    private readonly hostMounts: MountSpec[],
    private readonly mounts: CopiedMount[],
    private readonly options: KubernetesOptions
  ) {}

  async read(): Promise<V1Pod | undefined> {
    try {
      return await this.core.readNamespacedPod({ name: this.name, namespace: this.ns })
    } catch (error) {
      if (status(error) === 404) return undefined
      throw error
    }
  }

  follow(until: (s: PodState) => boolean, signal?: AbortSignal): Promise<PodState> {
    return followPod(this.kc, () => this.read(), this.ns, this.name, until, signal)
  }

  async lastState(): Promise<PodState> {
    return podState(await this.read())
  }

  /** Streams the host folders into the init container, then waits for the phase to start. */
  async copyIn(signal?: AbortSignal): Promise<PodState> {
    if (this.mounts.length > 0) {
      const s = await this.follow((x) => x.kind !== 'pending', signal)
      if (s.kind === 'copy-in') {
        const stdin = packMounts(this.hostMounts, this.mounts)
        const ws = (await new Attach(this.kc).attach(
          this.ns,
          this.name,
          COPY_IN,
          null,
          null,
          stdin,
          false
        )) as unknown as Socket
        const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()))
        await this.follow((x) => x.kind !== 'pending' && x.kind !== 'copy-in', signal)
        ws.close()
        await Promise.race([closed, delay(1000)])
      }
    }
    return this.follow((x) => x.kind !== 'pending' && x.kind !== 'copy-in', signal)
  }

  /** Follows the phase container's output into `out` until it ends (never ends `out`). */
  async logs(out: Writable): Promise<void> {
    const pass = new PassThrough()
    pass.on('data', (c: Buffer) => out.write(c))
    const ended = new Promise<void>((resolve) => {
      pass.on('end', resolve)
      pass.on('error', () => resolve())
    })
    await new Log(this.kc).log(this.ns, this.name, MAIN, pass, { follow: true })
    await ended
  }

  /** Reads each writable folder back from the helper that stays, into its host folder. */
  async readBack(): Promise<void> {
    const limits = this.options.readBack ?? {
      maxBytes: this.options.copySizeBytes,
      maxEntries: 200_000
    }
    for (const m of this.mounts) {
      if (m.readOnly) continue
      const out = new PassThrough()
      const stderr = new PassThrough()
      let errText = ''
      stderr.on('data', (c: Buffer) => (errText += c.toString('utf8').slice(0, 2000)))
      let exit: { status?: string; message?: string } | undefined
      const unpacked = unpackInto(out, this.hostMounts[m.index].source, limits)
      await new Exec(this.kc).exec(
        this.ns,
        this.name,
        COPY_OUT,
        ['tar', '-c', '-f', '-', '-C', `${IO_ROOT}/${m.index}`, '.'],
        out,
        stderr,
        null,
        false,
        (s) => (exit = s)
      )
      await unpacked
      if (exit?.status !== 'Success')
        throw new Error(`reading ${m.target} back failed: ${exit?.message ?? ''} ${errText}`.trim())
    }
  }

  async remove(graceSeconds: number): Promise<void> {
    if (this.removed && graceSeconds > 0) return
    try {
      await this.core.deleteNamespacedPod({
        name: this.name,
        namespace: this.ns,
        gracePeriodSeconds: graceSeconds
      })
    } catch (error) {
      if (status(error) !== 404) throw error
    }
    this.removed = true
    await this.follow((s) => s.kind === 'gone').catch(() => undefined)
  }
}

function runOf(labels: Record<string, string>): string {
  const runId = labels[LABELS.runId]
  if (runId === undefined) throw new Error(`an object of the run without the ${LABELS.runId} label`)
  return runId
}

function describe(state: PodState): string {
  if (state.kind === 'failed')
    return `the pod failed: ${state.reason}${state.message ? ` (${state.message})` : ''}`
  if (state.kind === 'gone') return 'the pod disappeared (deleted by someone else)'
  return `the pod is ${state.kind}`
}

function fail(
  result: PhaseResult,
  started: number,
  error: string,
  engineFault: boolean
): PhaseResult {
  result.error = error
  result.engineFault = engineFault
  result.durationMs = Date.now() - started
  return result
}

async function gone(p: Promise<unknown>): Promise<boolean> {
  try {
    await p
    return true
  } catch (error) {
    if (status(error) === 404) return false
    throw error
  }
}

function ignoreMissing(error: unknown): void {
  if (status(error) !== 404) throw error
}
