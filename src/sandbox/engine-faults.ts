import { InfrastructureError, errorMessage } from '../errors.js'

/**
 * Faults of the container engine, told apart from what the agent did. A request the engine
 * drops, refuses with a 5xx, or leaves unanswered past its deadline is an EngineFault: the run's
 * outcome becomes `infrastructure-error` (exit code 3), never a verdict on the agent.
 */

export class EngineFault extends InfrastructureError {
  constructor(
    readonly operation: string,
    cause: unknown
  ) {
    super(`the container engine failed during ${operation}: ${errorMessage(cause)}`, { cause })
    this.name = 'EngineFault'
  }
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOENT',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ECONNABORTED',
  'ERR_STREAM_PREMATURE_CLOSE'
])

/** Whether an error is the engine's (connection lost, refused, 5xx, no answer) rather than a refusal of what was asked. */
export function isEngineError(error: unknown): boolean {
  if (error instanceof EngineFault) return true
  const e = error as { code?: unknown; statusCode?: unknown; message?: unknown } | null
  if (e === null || typeof e !== 'object') return false
  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return true
  if (typeof e.statusCode === 'number' && e.statusCode >= 500 && e.statusCode !== 501) return true
  const m = typeof e.message === 'string' ? e.message : ''
  return /socket hang up|ECONNRESET|ECONNREFUSED|EPIPE|premature close|aborted|timed out|(unexpected|premature) end/i.test(
    m
  )
}

/**
 * Rejects with an EngineFault when `p` does not settle within `ms`. The timer is referenced on
 * purpose: while a run awaits the engine, the process must not exit because nothing else is
 * pending (a dropped socket leaves nothing else).
 */
export async function withDeadline<T>(p: Promise<T>, ms: number, operation: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new EngineFault(operation, new Error(`no answer within ${ms} ms`))),
      ms
    )
  })
  try {
    return await Promise.race([p, deadline])
  } catch (error) {
    if (error instanceof EngineFault) throw error
    if (isEngineError(error)) throw new EngineFault(operation, error)
    throw error
  } finally {
    clearTimeout(timer)
  }
}

/** A pause on a referenced timer (see withDeadline). */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * How long a run waits for an engine that went away (a daemon restarting, a socket that
 * vanished) to come back, once the loss is noticed: the run's cleanup retries within this window
 * and the run then ends with `infrastructure-error` (exit 3), its evidence written. One constant,
 * documented in docs/ARCHITECTURE.md ("Engine faults").
 */
export const ENGINE_RETRY_WINDOW_MS = 15_000

/**
 * How often a container's watch asks the engine about it while the run waits on it (a phase,
 * a sidecar): a lost connection or a vanished socket is noticed within this, or at once when the
 * container's output or wait stream ends first.
 */
export const LIVENESS_INTERVAL_MS = 1000

const GONE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOENT', 'ECONNABORTED'])

/**
 * Whether an error says the engine is gone (its socket missing, the connection refused or
 * reset) rather than slow or refusing: such a loss is final for the run at once; a slow engine
 * keeps its request deadline.
 */
export function isEngineGone(error: unknown): boolean {
  const e = (error instanceof EngineFault ? error.cause : error) as {
    code?: unknown
    message?: unknown
  } | null
  if (e === null || typeof e !== 'object') return false
  if (typeof e.code === 'string' && GONE_CODES.has(e.code)) return true
  const m = typeof e.message === 'string' ? e.message : ''
  return /socket hang up|ECONNRESET|ECONNREFUSED|EPIPE|ENOENT/.test(m)
}

/**
 * Calls `fn` until it succeeds or fails with something other than an engine fault, waiting
 * with a growing backoff while the engine is away, until the retry window (from the first call,
 * or the given deadline shared by several calls) has passed (for cleanup and re-inspection).
 */
export async function retryWhileAway<T>(
  fn: () => Promise<T>,
  options: { until?: number; firstDelayMs?: number; maxDelayMs?: number } = {}
): Promise<T> {
  const until = options.until ?? Date.now() + ENGINE_RETRY_WINDOW_MS
  let delay = options.firstDelayMs ?? 250
  for (;;) {
    try {
      return await fn()
    } catch (error) {
      const left = until - Date.now()
      if (left <= 0 || !isEngineError(error)) throw error
      await pause(Math.min(delay, left))
      delay = Math.min(delay * 2, options.maxDelayMs ?? 2000)
    }
  }
}

/**
 * Whether an exit by SIGTERM/SIGKILL (143/137) that the run did not ask for came from the
 * engine: the engine's event log no longer holds the container's start (the daemon restarted and
 * lost it), or holds a kill the run did not send.
 */
export function engineStoppedIt(
  exitCode: number | null,
  events: { action: string; signal?: string }[],
  killsSent: number
): boolean {
  if (exitCode !== 137 && exitCode !== 143) return false
  if (!events.some((e) => e.action === 'start')) return true
  return events.filter((e) => e.action === 'kill').length > killsSent
}
