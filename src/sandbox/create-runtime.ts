// The backend of the runtime boundary a run uses, chosen at the edge (`engine`): each loaded only
// when chosen (the Kubernetes client is large and needs Node 22 or later).
import type { Runtime } from './types.js'

export interface EngineSelection {
  name: 'docker' | 'kubernetes'
  /** Kubernetes: the namespace of the run's objects (null: the kubeconfig context's, else default). */
  namespace: string | null
}

export async function createRuntime(
  engine: EngineSelection | undefined,
  options: { copySizeBytes: number }
): Promise<Runtime> {
  if (engine?.name === 'kubernetes') {
    const { KubernetesRuntime, kubeNamespace, loadKubeConfig } =
      await import('./kubernetes/index.js')
    const kc = loadKubeConfig()
    return new KubernetesRuntime(kc, {
      namespace: kubeNamespace(kc, engine.namespace),
      copySizeBytes: options.copySizeBytes
    })
  }
  const { DockerRuntime } = await import('./docker/index.js')
  return new DockerRuntime()
}
