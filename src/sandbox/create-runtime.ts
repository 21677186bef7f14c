// The backend of the runtime boundary a run uses, chosen at the edge (`engine`): each loaded only
// when chosen (the Kubernetes client is large and needs Node 22 or later).
import * as zlib from 'node:zlib'
import { ConfigurationError } from '../errors.js'
import type { Host } from '../host.js'
import type { Runtime } from './types.js'

export interface EngineSelection {
  name: 'docker' | 'kubernetes'
  /** Kubernetes: the namespace of the run's objects (null: the kubeconfig context's, else default). */
  namespace: string | null
}

export async function createRuntime(
  engine: EngineSelection | undefined,
  options: { copySizeBytes: number; host: Host }
): Promise<Runtime> {
  if (engine?.name === 'kubernetes') {
    // The Kubernetes client's HTTP library needs zstd in zlib (Node 22.15 or later).
    if (typeof (zlib as { createZstdDecompress?: unknown }).createZstdDecompress !== 'function') {
      throw new ConfigurationError(
        'engine',
        `kubernetes needs Node 22.15 or later (the Kubernetes client requires it); this is Node ${process.versions.node}`
      )
    }
    const { KubernetesRuntime, kubeNamespace, loadKubeConfig } =
      await import('./kubernetes/index.js')
    const kc = loadKubeConfig()
    return new KubernetesRuntime(kc, {
      namespace: kubeNamespace(kc, engine.namespace),
      copySizeBytes: options.copySizeBytes
    })
  }
  const { DockerRuntime } = await import('./docker/index.js')
  return new DockerRuntime(options.host)
}
