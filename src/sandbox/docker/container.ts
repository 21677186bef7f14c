// The one container lifecycle of the Docker backend, shared by phases and sidecars:
// create → attach → start → wait (deadline / abort) → TERM, grace, KILL → inspect → remove.
import type { Writable } from 'node:stream'
import type Docker from 'dockerode'
import type { ContainerCreateOptions, ContainerInspectInfo } from 'dockerode'
import { errorMessage } from '../../errors.js'

export interface ExitInfo {
  exitCode: number | null
  /** The wait itself failed (the engine went away): the exit is unknown. */
  error?: string
}

export type WaitOutcome = 'exited' | 'timeout' | 'cancelled'

const STREAM_DRAIN_MS = 3000
const KILL_WAIT_MS = 10_000

export class ManagedContainer {
  /** Resolves when the container exits; never rejects (a failed wait resolves with `error`). */
  exited: Promise<ExitInfo> = Promise.resolve({ exitCode: null, error: 'not started' })
  private ended: Promise<void> = Promise.resolve()
  private input: NodeJS.WritableStream | undefined

  private constructor(
    private readonly docker: Docker,
    readonly container: Docker.Container
  ) {}

  static async create(docker: Docker, options: ContainerCreateOptions): Promise<ManagedContainer> {
    return new ManagedContainer(docker, await docker.createContainer(options))
  }

  get id(): string {
    return this.container.id
  }

  /** Streams stdout/stderr (demultiplexed) into the given writers; with `stdin`, keeps it open. */
  async attach(stdout: Writable, stderr: Writable, stdin = false): Promise<void> {
    const stream = await this.container.attach({
      stream: true,
      stdin,
      stdout: true,
      stderr: true,
      ...(stdin ? { hijack: true } : {})
    })
    this.ended = new Promise<void>((resolve) => {
      stream.on('end', resolve)
      stream.on('close', resolve)
      stream.on('error', () => resolve())
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
    await this.container.start()
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
      return await raceTimeout(
        Promise.race([this.exited.then(() => 'exited' as const), aborted]),
        timeoutMs,
        'timeout' as const
      )
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort)
    }
  }

  /** SIGTERM, wait up to the grace period, SIGKILL, wait for the exit. */
  async stop(graceMs: number): Promise<void> {
    await this.container.kill({ signal: 'SIGTERM' }).catch(() => undefined)
    const gone = await raceTimeout(
      this.exited.then(() => true),
      graceMs,
      false
    )
    if (!gone) {
      await this.container.kill({ signal: 'SIGKILL' }).catch(() => undefined)
      await raceTimeout(this.exited, KILL_WAIT_MS, undefined)
    }
  }

  /** Waits (bounded) until the output streams have delivered what the container wrote. */
  async drain(ms = STREAM_DRAIN_MS): Promise<void> {
    await raceTimeout(this.ended, ms, undefined)
  }

  inspect(): Promise<ContainerInspectInfo> {
    return this.container.inspect()
  }

  async remove(): Promise<void> {
    await this.container.remove({ force: true, v: true }).catch(() => undefined)
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
