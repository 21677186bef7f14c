// The CLI's log: phases and notes on stderr, the sandbox's output on stdout (controls stripped),
// and a heartbeat while a phase runs: a live line on a terminal, a plain line every 30 s in a
// log file or CI. With --quiet: one line per phase, warnings and errors (a terminal keeps its
// live line).
import type { Logger } from '../log.js'
import { stripHidden } from '../text-filter.js'

export interface TerminalOptions {
  quiet: boolean
  /** stderr is a terminal: the heartbeat rewrites one line instead of adding lines. */
  tty: boolean
  write: (text: string) => void
  writeOut: (text: string) => void
  now: () => number
  every: (fn: () => void, ms: number) => { stop(): void }
}

/** Seconds between heartbeat lines when stderr is not a terminal. */
export const PLAIN_HEARTBEAT_MS = 30_000
const LIVE_HEARTBEAT_MS = 1000

export function elapsed(ms: number): string {
  const s = Math.floor(ms / 1000)
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`
}

function defaults(quiet: boolean): TerminalOptions {
  return {
    quiet,
    tty: process.stderr.isTTY === true,
    write: (t) => process.stderr.write(t),
    writeOut: (t) => process.stdout.write(t),
    now: () => Date.now(),
    every: (fn, ms) => {
      const t = setInterval(fn, ms)
      t.unref()
      return { stop: () => clearInterval(t) }
    }
  }
}

export class TerminalLogger implements Logger {
  private readonly o: TerminalOptions
  private readonly phases: { name: string; start: number }[] = []
  private live = false

  constructor(quiet: boolean | Partial<TerminalOptions>) {
    this.o =
      typeof quiet === 'boolean' ? defaults(quiet) : { ...defaults(quiet.quiet ?? false), ...quiet }
  }

  private clearLive(): void {
    if (this.live) this.o.write('\r\x1b[2K')
    this.live = false
  }

  private tick(): void {
    const p = this.phases[this.phases.length - 1]
    if (p === undefined) return
    const text = `    … ${p.name}: ${elapsed(this.o.now() - p.start)}`
    if (this.o.tty) {
      this.o.write(`\r\x1b[2K${text}`)
      this.live = true
    } else if (!this.o.quiet) {
      this.o.write(`${text}, still running\n`)
    }
  }

  async group<T>(name: string, fn: () => Promise<T>): Promise<T> {
    this.clearLive()
    this.o.write(`==> ${name}\n`)
    const phase = { name, start: this.o.now() }
    this.phases.push(phase)
    const beat = this.o.every(
      () => this.tick(),
      this.o.tty ? LIVE_HEARTBEAT_MS : PLAIN_HEARTBEAT_MS
    )
    try {
      return await fn()
    } finally {
      beat.stop()
      this.phases.pop()
      this.clearLive()
      const took = this.o.now() - phase.start
      if (!this.o.quiet && took >= 1000) this.o.write(`    ${name} done in ${elapsed(took)}\n`)
    }
  }
  info(message: string): void {
    if (this.o.quiet) return
    this.clearLive()
    this.o.write(`    ${message}\n`)
  }
  warn(message: string): void {
    this.clearLive()
    this.o.write(`    warning: ${message}\n`)
  }
  error(message: string): void {
    this.clearLive()
    this.o.write(`    error: ${message}\n`)
  }
  output(phase: string, line: string): void {
    if (this.o.quiet) return
    this.clearLive()
    this.o.writeOut(`${phase} | ${stripHidden(line)}\n`)
  }
}
