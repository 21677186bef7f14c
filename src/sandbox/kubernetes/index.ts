// The Kubernetes backend of the runtime boundary: the only code that imports
// @kubernetes/client-node. A phase is a Pod (manifests.ts), a network a NetworkPolicy, a sidecar a
// Pod with a headless Service per name; every manifest passes the security check (hardening.ts)
// before it is sent. The host folders of a phase travel as tar through the API server.
// The runtime's seams are in their own files: preflight.ts, phase.ts (a phase's pod and its
// outcome), pod-lifecycle.ts, sidecar.ts, api-calls.ts and kubeconfig.ts.
import * as fs from 'node:fs'
import { CoreV1Api, NetworkingV1Api, NodeV1Api, VersionApi } from '@kubernetes/client-node'
import type { KubeConfig, V1NetworkPolicy, V1Pod } from '@kubernetes/client-node'
import { ConfigurationError } from '../../errors.js'
import { LABELS } from '../../labels.js'
import type { ImagePlan } from '../../plan.js'
import type {
  ContainerSpec,
  EngineFacts,
  ImageInfo,
  ImageLog,
  Network,
  NetworkSpec,
  RunOptions,
  Runtime,
  SidecarSpec
} from '../types.js'
import { apiFault, gone, ignoreMissing, runOf, status, typed } from './api-calls.js'
import { PINNED_IMAGE, podViolations, policyViolations } from './hardening.js'
import type { KubernetesOptions } from './kubeconfig.js'
import { copiedMounts, denyAllPolicy, networkPolicy, networksOf, podManifest } from './manifests.js'
import type { PodTarget } from './manifests.js'
import { labelValue } from './names.js'
import { runPhase } from './phase.js'
import type { PodMaker } from './phase.js'
import { Pod } from './pod-lifecycle.js'
import { preflight } from './preflight.js'
import { startSidecar } from './sidecar.js'
import type { Peer } from './sidecar.js'

export { PINNED_IMAGE } from './hardening.js'
export { RUNTIME_CLASSES, runtimeClassOf } from './runtime-classes.js'
import { RUNTIME_CLASSES, runtimeClassOf } from './runtime-classes.js'
export { ENFORCING_GROUPS } from './preflight.js'
export { kubeNamespace, loadKubeConfig } from './kubeconfig.js'
export type { KubernetesOptions } from './kubeconfig.js'

export class KubernetesRuntime implements Runtime {
  private readonly core: CoreV1Api
  private readonly net: NetworkingV1Api
  private readonly nodeApi: NodeV1Api
  private readonly ns: string
  /** Runs whose deny-all policy exists. */
  private readonly guarded = new Set<string>()
  /** The names sidecars answer to, by network (written to the phase pods' /etc/hosts). */
  private readonly peers = new Map<string, Peer[]>()
  /** The run's deny-all policy, then its pods: what phases and sidecars are made of. */
  private readonly pods: PodMaker = {
    guard: (runId, labels) => this.guard(runId, labels),
    createPod: (spec, deadlineSeconds, graceSeconds) =>
      this.createPod(spec, deadlineSeconds, graceSeconds)
  }

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
    await preflight({ kc: this.kc, core: this.core, nodeApi: this.nodeApi, ns: this.ns }, runtime)
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

  // The phase and the sidecar are in phase.ts and sidecar.ts (their types are the Runtime's).
  runPhase(spec: ContainerSpec, options: RunOptions) {
    return runPhase(this.pods, spec, options)
  }

  startSidecar(spec: SidecarSpec) {
    return startSidecar(
      { ...this.pods, kc: this.kc, core: this.core, ns: this.ns, peers: this.peers },
      spec
    )
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

type V1NetworkPolicyWire = ReturnType<typeof networkPolicy>
