// `engine` and `kubernetes-namespace`: which backend of the runtime boundary runs the sandbox.
// `auto` picks Kubernetes when the runner is a pod of a cluster without a Docker engine (Actions
// Runner Controller's kubernetes mode), Docker otherwise; the plan says which and why.
import { ConfigurationError } from '../errors.js'
import { INPUT } from '../input-names.js'
import type { InputReader } from '../input-read.js'

export type EngineName = 'docker' | 'kubernetes'

export interface EngineChoice {
  name: EngineName
  requested: EngineName | 'auto'
  /** Why this engine (what auto saw, or that it was named). */
  reason: string
  /** The namespace of the run's objects (kubernetes only; null: the kubeconfig context's). */
  namespace: string | null
}

/** What `auto` looks at, read once at the edge. */
export interface EngineFacts {
  /** KUBERNETES_SERVICE_HOST is set: the runner is a pod of a cluster. */
  inCluster: boolean
  /** DOCKER_HOST is set or the default socket exists. */
  dockerEngine: boolean
}

const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/

export function readEngine(read: InputReader, facts: EngineFacts): EngineChoice {
  const raw = read(INPUT.engine) ?? 'docker'
  if (raw !== 'docker' && raw !== 'kubernetes' && raw !== 'auto') {
    throw new ConfigurationError(INPUT.engine, `"${raw}" is not one of docker, kubernetes, auto`)
  }
  const ns = read(INPUT.kubernetesNamespace)
  if (ns !== undefined && !NAMESPACE.test(ns)) {
    throw new ConfigurationError(
      INPUT.kubernetesNamespace,
      `"${ns}" is not a namespace name (lower-case letters, digits and -, at most 63)`
    )
  }
  let name: EngineName
  let reason: string
  if (raw === 'auto') {
    name = facts.inCluster && !facts.dockerEngine ? 'kubernetes' : 'docker'
    reason =
      name === 'kubernetes'
        ? 'auto: the runner is in a Kubernetes cluster (KUBERNETES_SERVICE_HOST) and has no Docker engine'
        : facts.inCluster
          ? 'auto: the runner is in a Kubernetes cluster but has a Docker engine'
          : 'auto: the runner is not in a Kubernetes cluster'
  } else {
    name = raw
    reason = `engine: ${raw}`
  }
  if (ns !== undefined && name !== 'kubernetes') {
    throw new ConfigurationError(
      INPUT.kubernetesNamespace,
      `applies to engine: kubernetes only (this run uses ${name}: ${reason})`
    )
  }
  return { name, requested: raw, reason, namespace: ns ?? null }
}

/** The facts `auto` needs, from the runner's environment and the default Docker socket. */
export function engineFactsOf(
  env: NodeJS.ProcessEnv,
  socketExists: (p: string) => boolean
): EngineFacts {
  return {
    inCluster: (env.KUBERNETES_SERVICE_HOST ?? '') !== '',
    dockerEngine: (env.DOCKER_HOST ?? '') !== '' || socketExists('/var/run/docker.sock')
  }
}
