// The cluster's credentials and namespace, and the options of the Kubernetes backend.
import { KubeConfig } from '@kubernetes/client-node'

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
