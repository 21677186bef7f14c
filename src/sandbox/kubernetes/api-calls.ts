// The helpers of every call to the API server: its status code, its failure as the run's
// infrastructure error, the typed body client-node sends, a deletion that tolerates a missing object.
import { ApiException } from '@kubernetes/client-node'
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js'
import { InfrastructureError, errorMessage } from '../../errors.js'
import { LABELS } from '../../labels.js'

export function status(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined
}

/** An error of the API server (or no answer) as the run's infrastructure error. */
export function apiFault(what: string, error: unknown): InfrastructureError {
  return new InfrastructureError(
    `the Kubernetes API server failed ${what}: ${errorMessage(error).slice(0, 500)}`,
    { cause: error }
  )
}

/** The typed body client-node serializes, checked to serialize back to exactly the manifest. */
export function typed<T>(manifest: object, type: string): T {
  const model = ObjectSerializer.deserialize(manifest, type, '') as T
  const back: unknown = ObjectSerializer.serialize(model, type, '')
  if (JSON.stringify(sortKeys(back)) !== JSON.stringify(sortKeys(manifest))) {
    throw new Error(`the ${type} manifest would not reach the API server as written`)
  }
  return model
}

export function sortKeys(value: unknown): unknown {
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

/** What the backend uses of client-node's WebSocket. */
export interface Socket {
  close(): void
  once(event: 'close', listener: () => void): unknown
}

export function runOf(labels: Record<string, string>): string {
  const runId = labels[LABELS.runId]
  if (runId === undefined) throw new Error(`an object of the run without the ${LABELS.runId} label`)
  return runId
}

export async function gone(p: Promise<unknown>): Promise<boolean> {
  try {
    await p
    return true
  } catch (error) {
    if (status(error) === 404) return false
    throw error
  }
}

export function ignoreMissing(error: unknown): void {
  if (status(error) !== 404) throw error
}
