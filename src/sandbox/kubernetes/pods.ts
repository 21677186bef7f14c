// A pod as the backend follows it: its state read, then watched (the watch re-established when the
// API server drops it), until a condition holds; and what its status says in the runtime's terms.
import type { KubeConfig, V1Pod } from '@kubernetes/client-node'
import { Watch } from '@kubernetes/client-node'
import { COPY_IN, MAIN } from './manifests.js'

/** What a pod's status says about the phase's container. */
export type PodState =
  | { kind: 'pending'; waiting?: string; message?: string }
  | { kind: 'copy-in' }
  | { kind: 'running'; ip?: string }
  | { kind: 'exited'; exitCode: number; reason?: string; ip?: string }
  | { kind: 'failed'; reason: string; message: string }
  | { kind: 'gone' }

/** Waiting reasons that will not resolve by waiting: the pod cannot start. */
const STUCK = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError'
])

/** The runtime's view of a pod status (pure). */
export function podState(pod: V1Pod | undefined): PodState {
  if (pod === undefined) return { kind: 'gone' }
  const status = pod.status ?? {}
  const main = (status.containerStatuses ?? []).find((c) => c.name === MAIN)
  const init = (status.initContainerStatuses ?? []).find((c) => c.name === COPY_IN)
  const ip = status.podIP ?? undefined
  if (main?.state?.terminated) {
    const t = main.state.terminated
    return {
      kind: 'exited',
      exitCode: t.exitCode,
      ...(t.reason !== undefined ? { reason: t.reason } : {}),
      ...(ip !== undefined ? { ip } : {})
    }
  }
  if (status.phase === 'Failed') {
    return {
      kind: 'failed',
      reason: status.reason ?? 'Failed',
      message: status.message ?? init?.state?.terminated?.reason ?? ''
    }
  }
  if (init?.state?.terminated && init.state.terminated.exitCode !== 0) {
    return {
      kind: 'failed',
      reason: 'CopyInFailed',
      message: `copying the folders in exited ${init.state.terminated.exitCode}`
    }
  }
  if (main?.state?.running) return { kind: 'running', ...(ip !== undefined ? { ip } : {}) }
  if (init?.state?.running) return { kind: 'copy-in' }
  const waiting = main?.state?.waiting ?? init?.state?.waiting
  if (waiting?.reason !== undefined && STUCK.has(waiting.reason)) {
    return { kind: 'failed', reason: waiting.reason, message: waiting.message ?? '' }
  }
  return {
    kind: 'pending',
    ...(waiting?.reason !== undefined ? { waiting: waiting.reason } : {}),
    ...(waiting?.message !== undefined ? { message: waiting.message } : {})
  }
}

/** How many times in a row the watch may be lost without an answer in between. */
const MAX_LOST_WATCHES = 5

/**
 * Reads the pod, then watches it until `done(state)` is true; a watch the API server ends (or
 * loses) is followed by a fresh read and a new watch. Throws when the API server does not answer
 * MAX_LOST_WATCHES times in a row.
 */
export async function followPod(
  kc: KubeConfig,
  read: () => Promise<V1Pod | undefined>,
  namespace: string,
  name: string,
  done: (state: PodState) => boolean,
  signal?: AbortSignal
): Promise<PodState> {
  const watch = new Watch(kc)
  let lost = 0
  for (;;) {
    let state: PodState
    try {
      state = podState(await read())
      lost = 0
    } catch (error) {
      if (++lost >= MAX_LOST_WATCHES) throw error
      await delay(200 * lost)
      continue
    }
    if (done(state) || state.kind === 'gone') return state
    if (signal?.aborted) return state
    const version = await new Promise<{ state?: PodState; error?: unknown }>((resolve) => {
      let controller: AbortController | undefined
      const onAbort = (): void => {
        controller?.abort()
        resolve({})
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      watch
        .watch(
          `/api/v1/namespaces/${namespace}/pods`,
          { fieldSelector: `metadata.name=${name}` },
          (type, obj: V1Pod) => {
            const s = type === 'DELETED' ? ({ kind: 'gone' } as const) : podState(obj)
            if (done(s) || s.kind === 'gone') {
              signal?.removeEventListener('abort', onAbort)
              controller?.abort()
              resolve({ state: s })
            }
          },
          (error: unknown) => {
            signal?.removeEventListener('abort', onAbort)
            resolve({ error: error ?? new Error('the watch ended') })
          }
        )
        .then(
          (c) => (controller = c),
          (error: unknown) => resolve({ error })
        )
    })
    if (version.state !== undefined) return version.state
    if (signal?.aborted) return state
    // The watch ended (the API server's timeout, a dropped connection): read again and re-watch.
    if (version.error !== undefined && ++lost >= MAX_LOST_WATCHES)
      throw version.error instanceof Error ? version.error : new Error(String(version.error))
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
