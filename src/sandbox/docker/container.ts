// The one container lifecycle of the Docker backend, shared by phases and sidecars:
// create → attach → start → wait (deadline / abort) → TERM, grace, KILL → inspect → remove.
import type { Writable } from 'node:stream'
import type Docker from 'dockerode'
import type { ContainerCreateOptions, ContainerInspectInfo } from 'dockerode'
import { errorMessage } from '../../errors.js'
import {
  EngineFault,
  LIVENESS_INTERVAL_MS,
  isEngineError,
  isEngineGone,
  withDeadline
} from '../engine-faults.js'
import { Demultiplexer } from './demux.js'

export interface ExitInfo {
  exitCode: number | null
  /** The wait itself failed, or the watch found the engine lost: the exit is unknown. */
  error?: string
}

export type WaitOutcome = 'exited' | 'timeout' | 'cancelled'

const STREAM_DRAIN_MS = 3000
const KILL_WAIT_MS = 10_000
/** A container seen stopped this long without the engine answering the wait: the answer is lost. */
const UNANSWERED_WAIT_MS = 3000

export class ManagedContainer {
  /**
   * Resolves when the container exits, or with `error` when the wait failed or the container's
   * watch found the engine lost (see `watch`); never rejects.
   */
  exited: Promise<ExitInfo> = Promise.resolve({ exitCode: null, error: 'not started' })
  /** Why the engine was found lost (undefined: it was not). */
  lostReason: string | undefined
  /**
   * A question of the watch the engine failed (no answer in time, connection lost), even when
   * the container's exit came through anyway: the engine misbehaved during the run.
   */
  probeFault: string | undefined
  /** Settles when the watch has ended (after its last question is answered or has failed). */
  watched: Promise<void> = Promise.resolve()
  private lose: (reason: string) => void = () => undefined
  private wake: () => void = () => undefined
  private ended: Promise<void> = Promise.resolve()
  private input: NodeJS.WritableStream | undefined
  /** Set when the engine cut the output stream. */
  streamError: string | undefined

  private constructor(
    private readonly docker: Docker,
    readonly container: Docker.Container,
    /** The deadline of one ordinary engine request (the host's engineTimeoutMs). */
    private readonly timeoutMs: number
  ) {}

  /** Kill signals this run sent (an exit by a signal nobody here sent is the engine's). */
  killsSent = 0

  static async create(
    docker: Docker,
    options: ContainerCreateOptions,
    timeoutMs: number
  ): Promise<ManagedContainer> {
    return new ManagedContainer(
      docker,
      await withDeadline(docker.createContainer(options), timeoutMs, 'container create'),
      timeoutMs
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
      this.timeoutMs,
      'container attach'
    )
    this.ended = new Promise<void>((resolve) => {
      let ended = false
      // Each end of the stream wakes the watch: a container exiting, or an engine going away.
      stream.on('end', () => {
        ended = true
        resolve()
        this.wake()
      })
      stream.on('close', () => {
        if (!ended && !stdin) this.streamError ??= 'the stream closed before its end'
        resolve()
        this.wake()
      })
      stream.on('error', (e: unknown) => {
        // The output stream cut by the engine: the logs are incomplete.
        this.streamError = errorMessage(e)
        resolve()
        this.wake()
      })
    })
    // Read at the pace the writers take it (back-pressure), never gathered in memory.
    stream.pipe(new Demultiplexer(stdout, stderr))
    if (stdin) this.input = stream
  }

  /** Writes the standard input once and closes it. */
  write(data: string): void {
    this.input?.end(data)
    this.input = undefined
  }

  /**
   * Starts the container and its watch, which runs until the exit is known (phases and sidecars
   * alike).
   */
  async start(): Promise<void> {
    // `next-exit`: the default condition (`not-running`) answers at once for a created container.
    // The handler is attached at once: a daemon that goes away must not leave a rejection unhandled.
    const waited = this.container.wait({ condition: 'next-exit' }).then(
      (r: { StatusCode?: number }): ExitInfo => ({ exitCode: r.StatusCode ?? null }),
      (e: unknown): ExitInfo => ({ exitCode: null, error: errorMessage(e) })
    )
    // A wait cut by the engine never settles: the watch settles `exited` instead.
    const lost = new Promise<ExitInfo>((resolve) => {
      this.lose = (reason) => {
        this.lostReason ??= reason
        resolve({ exitCode: null, error: reason })
      }
    })
    let settled = false
    this.exited = Promise.race([waited, lost])
    void this.exited.then(() => {
      settled = true
      this.wake()
    })
    await withDeadline(this.container.start(), this.timeoutMs, 'container start')
    this.watched = this.watch(() => settled)
  }

  /** Waits for the exit (or the loss of the engine), the deadline or the abort signal. */
  async waitUntil(timeoutMs: number, signal?: AbortSignal): Promise<WaitOutcome> {
    let onAbort: (() => void) | undefined
    const aborted = new Promise<WaitOutcome>((resolve) => {
      if (!signal) return
      onAbort = () => resolve('cancelled')
      if (signal.aborted) onAbort()
      else signal.addEventListener('abort', onAbort, { once: true })
    })
    try {
      return await raceTimeout(
        Promise.race([this.exited.then(() => 'exited' as const), aborted]),
        timeoutMs,
        'timeout' as const
      )
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort)
    }
  }

  /**
   * The container's watch, from its start until its exit is known: asks the engine about it
   * every LIVENESS_INTERVAL_MS, and at once when its output stream ends. The engine gone (socket
   * missing, connection refused or reset), the container gone, the engine silent past the
   * request deadline, or the container stopped without the engine answering the wait: the exit
   * settles with the reason (an engine fault, not the container's exit).
   */
  private async watch(done: () => boolean): Promise<void> {
    const limit = this.timeoutMs
    let silentSince: number | undefined
    let stoppedSince: number | undefined
    for (;;) {
      await this.nap(LIVENESS_INTERVAL_MS)
      if (done()) return
      try {
        const info = await withDeadline(this.container.inspect(), limit, 'container inspect')
        if (done()) return
        silentSince = undefined
        stoppedSince = info.State.Running ? undefined : (stoppedSince ?? Date.now())
        if (stoppedSince !== undefined && Date.now() - stoppedSince >= UNANSWERED_WAIT_MS)
          return this.lose('the container stopped but the engine never answered the wait')
      } catch (error) {
        if (isEngineError(error)) this.probeFault ??= errorMessage(error)
        if (done()) return
        if (!isEngineError(error)) return this.lose(`the container is gone: ${errorMessage(error)}`)
        if (isEngineGone(error))
          return this.lose(`the container engine went away: ${errorMessage(error)}`)
        silentSince ??= Date.now()
        if (Date.now() - silentSince >= limit)
          return this.lose(`the engine stopped answering: ${errorMessage(error)}`)
      }
    }
  }

  /** A pause of the watch (on a referenced timer, see withDeadline) that `wake` ends early. */
  private nap(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(finish, ms)
      function finish(): void {
        clearTimeout(timer)
        resolve()
      }
      this.wake = finish
    })
  }

  /** SIGTERM, wait up to the grace period, SIGKILL, wait for the exit. */
  async stop(graceMs: number): Promise<void> {
    this.killsSent++
    await withDeadline(this.container.kill({ signal: 'SIGTERM' }), this.timeoutMs, 'kill').catch(
      (error: unknown) => {
        // Nobody to wait for: the exit settles with the reason at once.
        if (isEngineGone(error)) this.lose(`the container engine went away: ${errorMessage(error)}`)
      }
    )
    const gone = await raceTimeout(
      this.exited.then(() => true),
      graceMs,
      false
    )
    if (!gone) {
      this.killsSent++
      await withDeadline(this.container.kill({ signal: 'SIGKILL' }), this.timeoutMs, 'kill').catch(
        () => undefined
      )
      await raceTimeout(this.exited, KILL_WAIT_MS, undefined)
    }
  }

  /** Waits (bounded) until the output streams have delivered what the container wrote. */
  async drain(ms = STREAM_DRAIN_MS): Promise<void> {
    await raceTimeout(this.ended, ms, undefined)
  }

  inspect(): Promise<ContainerInspectInfo> {
    return withDeadline(this.container.inspect(), this.timeoutMs, 'container inspect')
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
    return withDeadline(read(), this.timeoutMs, 'events')
  }

  /** Removes the container; throws an EngineFault when the engine does not remove it. */
  async remove(): Promise<void> {
    try {
      await withDeadline(
        this.container.remove({ force: true, v: true }),
        this.timeoutMs,
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
