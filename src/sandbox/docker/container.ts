// The one container lifecycle of the Docker backend, shared by phases and sidecars:
// create → attach → start → wait (deadline / abort) → TERM, grace, KILL → inspect → remove.
import type { Writable } from 'node:stream'
import type Docker from 'dockerode'
import type { ContainerCreateOptions, ContainerInspectInfo } from 'dockerode'
import { errorMessage } from '../../errors.js'
import {
  EngineFault,
  engineTimeoutMs,
  isEngineError,
  pause,
  withDeadline
} from '../engine-faults.js'

export interface ExitInfo {
  exitCode: number | null
  /** The wait itself failed (the engine went away): the exit is unknown. */
  error?: string
}

/** `lost`: the container stopped but the engine's answer to the wait never came (engine fault). */
export type WaitOutcome = 'exited' | 'timeout' | 'cancelled' | 'lost'

const STREAM_DRAIN_MS = 3000
const KILL_WAIT_MS = 10_000

export class ManagedContainer {
  /** Resolves when the container exits; never rejects (a failed wait resolves with `error`). */
  exited: Promise<ExitInfo> = Promise.resolve({ exitCode: null, error: 'not started' })
  private ended: Promise<void> = Promise.resolve()
  private input: NodeJS.WritableStream | undefined
  /** Set when the engine cut the output stream. */
  streamError: string | undefined

  private constructor(
    private readonly docker: Docker,
    readonly container: Docker.Container
  ) {}

  /** Kill signals this run sent (an exit by a signal nobody here sent is the engine's). */
  killsSent = 0

  static async create(docker: Docker, options: ContainerCreateOptions): Promise<ManagedContainer> {
    return new ManagedContainer(
      docker,
      await withDeadline(docker.createContainer(options), engineTimeoutMs(), 'container create')
    )
  }

  get id(): string {
    return this.container.id
  }

  /** Streams stdout/stderr (demultiplexed) into the given writers; with `stdin`, keeps it open. */
  async attach(stdout: Writable, stderr: Writable, stdin = false): Promise<void> {
    const stream = await withDeadline(
      this.container.attach({
        stream: true,
        stdin,
        stdout: true,
        stderr: true,
        ...(stdin ? { hijack: true } : {})
      }),
      engineTimeoutMs(),
      'container attach'
    )
    this.ended = new Promise<void>((resolve) => {
      let ended = false
      stream.on('end', () => {
        ended = true
        resolve()
      })
      stream.on('close', () => {
        if (!ended && !stdin) this.streamError ??= 'the stream closed before its end'
        resolve()
      })
      stream.on('error', (e: unknown) => {
        // The output stream cut by the engine: the logs are incomplete.
        this.streamError = errorMessage(e)
        resolve()
      })
    })
    this.docker.modem.demuxStream(stream, stdout, stderr)
    if (stdin) this.input = stream
  }

  /** Writes the standard input once and closes it. */
  write(data: string): void {
    this.input?.end(data)
    this.input = undefined
  }

  async start(): Promise<void> {
    // `next-exit`: the default condition (`not-running`) answers at once for a created container.
    // The handler is attached at once: a daemon that goes away must not leave a rejection unhandled.
    this.exited = this.container.wait({ condition: 'next-exit' }).then(
      (r: { StatusCode?: number }) => ({ exitCode: r.StatusCode ?? null }),
      (e: unknown) => ({ exitCode: null, error: errorMessage(e) })
    )
    await withDeadline(this.container.start(), engineTimeoutMs(), 'container start')
  }

  /** Waits for the exit, the deadline or the abort signal, whichever comes first. */
  async waitUntil(timeoutMs: number, signal?: AbortSignal): Promise<WaitOutcome> {
    let onAbort: (() => void) | undefined
    const aborted = new Promise<WaitOutcome>((resolve) => {
      if (!signal) return
      onAbort = () => resolve('cancelled')
      if (signal.aborted) onAbort()
      else signal.addEventListener('abort', onAbort, { once: true })
    })
    try {
      const watch = { done: false }
      try {
        return await raceTimeout(
          Promise.race([this.exited.then(() => 'exited' as const), aborted, this.watchdog(watch)]),
          timeoutMs,
          'timeout' as const
        )
      } finally {
        watch.done = true
      }
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort)
    }
  }

  /**
   * Re-inspects the container while the wait is pending, with a growing interval: when it has
   * stopped and the wait still has not answered (a stalled or lost connection), or the engine
   * stops answering at all, the outcome is `lost` — an engine fault, not the agent's exit.
   */
  private async watchdog(watch: { done: boolean }): Promise<WaitOutcome> {
    const limit = engineTimeoutMs()
    let interval = Math.min(500, limit)
    let silentSince: number | undefined
    let stoppedSeen = 0
    for (;;) {
      await pause(interval)
      if (watch.done) return new Promise<WaitOutcome>(() => undefined)
      interval = Math.min(interval * 2, 5000, limit)
      try {
        const info = await withDeadline(this.container.inspect(), limit, 'container inspect')
        silentSince = undefined
        // Two looks at a stopped container without an answer to the wait: the answer is lost.
        stoppedSeen = info.State.Running ? 0 : stoppedSeen + 1
        if (stoppedSeen >= 2) {
          this.lostReason = 'the container stopped but the engine never answered the wait'
          return 'lost'
        }
      } catch (error) {
        if (!isEngineError(error)) {
          this.lostReason = `the container is gone: ${errorMessage(error)}`
          return 'lost'
        }
        silentSince ??= Date.now()
        if (Date.now() - silentSince >= limit) {
          this.lostReason = `the engine stopped answering: ${errorMessage(error)}`
          return 'lost'
        }
      }
    }
  }

  /** Why the wait was `lost`. */
  lostReason: string | undefined

  /** SIGTERM, wait up to the grace period, SIGKILL, wait for the exit. */
  async stop(graceMs: number): Promise<void> {
    this.killsSent++
    await withDeadline(this.container.kill({ signal: 'SIGTERM' }), engineTimeoutMs(), 'kill').catch(
      () => undefined
    )
    const gone = await raceTimeout(
      this.exited.then(() => true),
      graceMs,
      false
    )
    if (!gone) {
      this.killsSent++
      await withDeadline(
        this.container.kill({ signal: 'SIGKILL' }),
        engineTimeoutMs(),
        'kill'
      ).catch(() => undefined)
      await raceTimeout(this.exited, KILL_WAIT_MS, undefined)
    }
  }

  /** Waits (bounded) until the output streams have delivered what the container wrote. */
  async drain(ms = STREAM_DRAIN_MS): Promise<void> {
    await raceTimeout(this.ended, ms, undefined)
  }

  inspect(): Promise<ContainerInspectInfo> {
    return withDeadline(this.container.inspect(), engineTimeoutMs(), 'container inspect')
  }

  /**
   * The engine's events about this container since `since` (seconds): whether it still knows
   * the start, and the kills it delivered. Throws an EngineFault when the engine does not answer.
   */
  async events(since: number): Promise<{ action: string }[]> {
    const until = Math.ceil(Date.now() / 1000) + 1
    const read = async (): Promise<{ action: string }[]> => {
      const stream = await this.docker.getEvents({
        since,
        until,
        filters: JSON.stringify({ container: [this.id] })
      })
      let text = ''
      for await (const chunk of stream) text += String(chunk)
      return text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => {
          const e = JSON.parse(l) as { Action?: string; status?: string }
          return { action: (e.Action ?? e.status ?? '').split(':')[0] }
        })
    }
    return withDeadline(read(), engineTimeoutMs(), 'events')
  }

  /** Removes the container; throws an EngineFault when the engine does not remove it. */
  async remove(): Promise<void> {
    try {
      await withDeadline(
        this.container.remove({ force: true, v: true }),
        engineTimeoutMs(),
        'container remove'
      )
    } catch (error) {
      // Already gone is removed.
      if ((error as { statusCode?: number }).statusCode === 404) return
      throw error instanceof EngineFault ? error : new EngineFault('container remove', error)
    }
  }
}

/**
 * The promise's value, or `fallback` after `ms`. The timer is referenced while it is awaited (an
 * unreferenced one lets the process exit mid-run) and cleared as soon as the race is settled.
 */
export async function raceTimeout<T, F>(
  promise: Promise<T>,
  ms: number,
  fallback: F
): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<F>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}
