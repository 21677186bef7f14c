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

/** Deadline of one ordinary engine request (not the long-lived wait/attach/stats streams). */
export function engineTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const v = Number(env.AIRLOCK_ENGINE_TIMEOUT_MS)
  return Number.isFinite(v) && v > 0 && v <= 2 ** 31 - 1 ? v : 60_000
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
 * Calls `fn` until it succeeds or fails with something other than an engine fault, waiting
 * with a growing backoff while the engine is away (for cleanup and re-inspection).
 */
export async function retryWhileAway<T>(
  fn: () => Promise<T>,
  options: { attempts?: number; firstDelayMs?: number; maxDelayMs?: number } = {}
): Promise<T> {
  const attempts = options.attempts ?? 6
  let delay = options.firstDelayMs ?? 250
  for (let i = 1; ; i++) {
    try {
      return await fn()
    } catch (error) {
      if (i >= attempts || !isEngineError(error)) throw error
      await pause(delay)
      delay = Math.min(delay * 2, options.maxDelayMs ?? 4000)
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
