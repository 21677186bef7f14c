// The CLI's log: phases and notes on stderr, the sandbox's output on stdout (controls stripped).
import type { Logger } from '../log.js'
import { stripHidden } from '../text-filter.js'

export class TerminalLogger implements Logger {
  constructor(private readonly quiet: boolean) {}
  async group<T>(name: string, fn: () => Promise<T>): Promise<T> {
    process.stderr.write(`==> ${name}\n`)
    return fn()
  }
  info(message: string): void {
    process.stderr.write(`    ${message}\n`)
  }
  warn(message: string): void {
    process.stderr.write(`    warning: ${message}\n`)
  }
  error(message: string): void {
    process.stderr.write(`    error: ${message}\n`)
  }
  output(phase: string, line: string): void {
    if (!this.quiet) process.stdout.write(`${phase} | ${stripHidden(line)}\n`)
  }
}
