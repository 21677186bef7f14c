// What the cluster must have before a run: the namespace, the tier's RuntimeClass and a network
// plugin that enforces NetworkPolicy (fail closed).
import { ApisApi } from '@kubernetes/client-node'
import type { CoreV1Api, KubeConfig, NodeV1Api } from '@kubernetes/client-node'
import { ConfigurationError } from '../../errors.js'
import { apiFault, status } from './api-calls.js'
import { runtimeClassOf } from './runtime-classes.js'

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

/** The clients and namespace the checks use. */
export interface PreflightApis {
  kc: KubeConfig
  core: CoreV1Api
  nodeApi: NodeV1Api
  ns: string
}

/**
 * The API server answers, the namespace exists and its pods can be listed, the RuntimeClass of
 * the tier exists (no fallback), and a NetworkPolicy-enforcing network plugin is installed.
 */
export async function preflight(apis: PreflightApis, runtime: string): Promise<void> {
  try {
    await apis.core.listNamespacedPod({ namespace: apis.ns, limit: 1 })
  } catch (error) {
    const code = status(error)
    if (code === 404)
      throw new ConfigurationError(
        'kubernetes-namespace',
        `namespace "${apis.ns}" does not exist in the cluster; create it (docs/runner-scale-sets.md) or name another`
      )
    if (code === 401 || code === 403)
      throw new ConfigurationError(
        'kubernetes-namespace',
        `the credentials may not list pods in namespace "${apis.ns}" (HTTP ${code}); bind the Role of docs/runner-scale-sets.md`
      )
    throw apiFault('to answer', error)
  }
  const cls = runtimeClassOf(runtime)
  if (cls !== null) {
    try {
      await apis.nodeApi.readRuntimeClass({ name: cls })
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
    const list = await apis.kc.makeApiClient(ApisApi).getAPIVersions()
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
