/** How the pipeline speaks: the action writes to the Actions log, the CLI to the terminal. */
export interface Logger {
  /** Runs one stage inside a named group (a `core.group` in the action, a phase line on the CLI). */
  group<T>(name: string, fn: () => Promise<T>): Promise<T>
  info(message: string): void
  warn(message: string): void
  error(message: string): void
  /** Echoes one line of a sandbox phase's output (untrusted text). */
  output(phase: string, line: string): void
}

/** A logger that keeps everything in memory: for tests and for quiet runs. */
export class MemoryLogger implements Logger {
  readonly lines: string[] = []
  async group<T>(name: string, fn: () => Promise<T>): Promise<T> {
    this.lines.push(`>> ${name}`)
    return fn()
  }
  info(message: string): void {
    this.lines.push(message)
  }
  warn(message: string): void {
    this.lines.push(`warning: ${message}`)
  }
  error(message: string): void {
    this.lines.push(`error: ${message}`)
  }
  output(phase: string, line: string): void {
    this.lines.push(`[${phase}] ${line}`)
  }
}

/** A logger that passes every message through `mask` (phase output is masked at the source). */
export function maskingLogger(log: Logger, mask: (text: string) => string): Logger {
  return {
    group: (name, fn) => log.group(name, fn),
    info: (m) => log.info(mask(m)),
    warn: (m) => log.warn(mask(m)),
    error: (m) => log.error(mask(m)),
    output: (phase, line) => log.output(phase, mask(line))
  }
}
