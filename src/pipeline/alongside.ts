// Steps that do not depend on each other's results run at the same time; the run waits for all
// of them before it goes on or cleans up, so nothing one of them made is left behind when another
// failed. Their log lines are kept and shown step by step once they are done, never interleaved.
import { performance } from 'node:perf_hooks'
import { errorMessage } from '../errors.js'
import type { Logger } from '../log.js'

type Steps<T extends readonly unknown[]> = { [K in keyof T]: (log: Logger) => Promise<T[K]> }

/**
 * Runs `steps` at once. The step at `live` logs as it goes (the long one: a build the reader
 * watches); the others' lines follow it, step by step, when all are done. Waits until every step
 * has settled, then throws the failure of the first step in the list that failed (the one that
 * would have ended the run had they run one after another), or returns the results.
 */
export async function alongside<T extends readonly unknown[]>(
  log: Logger,
  live: number,
  steps: Steps<T>
): Promise<T> {
  const buffers = steps.map((_, i) => (i === live ? undefined : new BufferedLogger()))
  const settled = await Promise.allSettled(steps.map((step, i) => step(buffers[i] ?? log)))
  for (const b of buffers) await b?.replay(log)
  const failures = settled.filter((r) => r.status === 'rejected')
  // The first failure ends the run; the others are said, not dropped.
  for (const other of failures.slice(1))
    log.warn(`also failed alongside: ${errorMessage(other.reason)}`)
  if (failures.length > 0) throw failures[0].reason
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T
}

/** Runs `fn` and hands its duration (ms, whole) to `done`, also when it fails. */
export async function timed<T>(fn: () => Promise<T>, done: (ms: number) => void): Promise<T> {
  const start = performance.now()
  try {
    return await fn()
  } finally {
    done(Math.round(performance.now() - start))
  }
}

type Entry =
  | { kind: 'info' | 'warn' | 'error'; text: string }
  | { kind: 'output'; phase: string; text: string }
  | { kind: 'group'; name: string; entries: Entry[] }

/** Keeps what a step logs, groups included, to be shown later through another logger. */
export class BufferedLogger implements Logger {
  private readonly root: Entry[] = []
  private current: Entry[] = this.root

  async group<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const entry: Entry = { kind: 'group', name, entries: [] }
    this.current.push(entry)
    const outer = this.current
    this.current = entry.entries
    try {
      return await fn()
    } finally {
      this.current = outer
    }
  }
  info(text: string): void {
    this.current.push({ kind: 'info', text })
  }
  warn(text: string): void {
    this.current.push({ kind: 'warn', text })
  }
  error(text: string): void {
    this.current.push({ kind: 'error', text })
  }
  output(phase: string, text: string): void {
    this.current.push({ kind: 'output', phase, text })
  }

  /** Shows everything kept, in order, through `to`. */
  async replay(to: Logger, entries: Entry[] = this.root): Promise<void> {
    for (const e of entries) {
      if (e.kind === 'group') await to.group(e.name, () => this.replay(to, e.entries))
      else if (e.kind === 'output') to.output(e.phase, e.text)
      else to[e.kind](e.text)
    }
  }
}
