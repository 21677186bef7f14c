// Removing what a run left on the engine, by its label: the containers (with their anonymous
// volumes), then the networks, then the volumes. One procedure for both transports: dockerode in
// the runtime (src/sandbox/docker/), and the small HTTP client of the post step (engine-http.ts),
// which keeps the action's cleanup bundle free of the engine library.
import { errorMessage } from '../errors.js'
import { LABELS } from '../labels.js'
import {
  ENGINE_RETRY_WINDOW_MS,
  EngineFault,
  retryWhileAway,
  withDeadline
} from './engine-faults.js'
import { engineRequest } from './engine-http.js'
import type { EngineEndpoint } from './engine-http.js'

/** The label every container, network and volume of a run carries. */
export const RUN_ID_LABEL = LABELS.runId

export type ObjectKind = 'container' | 'network' | 'volume'

export interface Removed {
  containers: number
  networks: number
  volumes: number
}

/** What cleanup needs of an engine: list by label filter, remove by id. */
export interface CleanupEngine {
  /** `filters` is the engine API's JSON filter argument. */
  list(kind: ObjectKind, filters: string): Promise<{ id: string; name: string }[]>
  remove(kind: ObjectKind, id: string): Promise<void>
}

/** The engine's filter argument selecting one run's objects. */
export function runFilters(runId: string): string {
  return JSON.stringify({ label: [`${RUN_ID_LABEL}=${runId}`] })
}

/**
 * Removes everything carrying the run's label. Each request has a deadline and is retried while
 * the engine is away (a daemon restarting), within one retry window; an object already gone (404) is not counted; what
 * still fails is thrown, after the rest was removed, as an EngineFault.
 */
export async function removeRunObjects(
  engine: CleanupEngine,
  runId: string,
  timeoutMs: number
): Promise<Removed> {
  const filters = runFilters(runId)
  const removed: Removed = { containers: 0, networks: 0, volumes: 0 }
  const failures: string[] = []
  // One retry window for the whole cleanup: an engine that is not back by then is left to
  // `airlock cleanup --run-id` (or the action's post step).
  const until = Date.now() + ENGINE_RETRY_WINDOW_MS
  const call = <T>(what: string, fn: () => Promise<T>): Promise<T> =>
    retryWhileAway(() => withDeadline(fn(), timeoutMs, what), { until })
  const order: [ObjectKind, keyof Removed][] = [
    ['container', 'containers'],
    ['network', 'networks'],
    ['volume', 'volumes']
  ]
  // The three lists asked at once; removed in order (containers before the networks they use).
  const lists = order.map(([kind, count]) =>
    call(`list ${count}`, () => engine.list(kind, filters))
  )
  for (const l of lists) l.catch(() => undefined) // awaited below, in order
  for (const [i, [kind, count]] of order.entries()) {
    for (const o of await lists[i]) {
      try {
        await call(`remove ${kind} ${o.name}`, () => engine.remove(kind, o.id))
        removed[count]++
      } catch (error) {
        if ((error as { statusCode?: number }).statusCode === 404) continue
        failures.push(`remove ${kind} ${o.name}: ${errorMessage(error)}`)
      }
    }
  }
  if (failures.length > 0) throw new EngineFault('cleanup', new Error(failures.join('; ')))
  return removed
}

/** The cleanup engine over plain HTTP (API 1.41 and later), at DOCKER_HOST or the default socket. */
export function httpCleanupEngine(endpoint: EngineEndpoint, timeoutMs: number): CleanupEngine {
  const q = (filters: string): string => `filters=${encodeURIComponent(filters)}`
  const ids = (answer: unknown, id: string, name: string): { id: string; name: string }[] =>
    (Array.isArray(answer) ? (answer as Record<string, unknown>[]) : [])
      .filter((o) => typeof o[id] === 'string')
      .map((o) => ({ id: o[id] as string, name: String(o[name] ?? o[id]) }))
  return {
    async list(kind, filters) {
      if (kind === 'container') {
        const answer = await engineRequest(
          endpoint,
          'GET',
          `/containers/json?all=1&${q(filters)}`,
          timeoutMs
        )
        return ids(answer, 'Id', 'Id').map((o) => ({ ...o, name: o.name.slice(0, 12) }))
      }
      if (kind === 'network')
        return ids(
          await engineRequest(endpoint, 'GET', `/networks?${q(filters)}`, timeoutMs),
          'Id',
          'Name'
        )
      const answer = (await engineRequest(endpoint, 'GET', `/volumes?${q(filters)}`, timeoutMs)) as
        { Volumes?: unknown } | undefined
      return ids(answer?.Volumes, 'Name', 'Name')
    },
    async remove(kind, id) {
      const name = encodeURIComponent(id)
      const target =
        kind === 'container'
          ? `/containers/${name}?force=1&v=1`
          : kind === 'network'
            ? `/networks/${name}`
            : `/volumes/${name}?force=1`
      await engineRequest(endpoint, 'DELETE', target, timeoutMs)
    }
  }
}
