import { randomUUID } from 'node:crypto'
import * as core from '@actions/core'
import type { Logger } from '../../log.js'
import { stripHidden } from '../../text-filter.js'

/**
 * Makes an untrusted line inert in the Actions log: workflow commands are recognised at the start
 * of a line (`::name ...::`) and in the legacy `##[name ...]` form, so every echoed line gets a
 * prefix and `##[` is broken up.
 */
export function neutralizeLine(phase: string, line: string): string {
  return `${phase} | ${stripHidden(line).replace(/##\[/g, '## [')}`
}

/** The action's logger: a `core.group` per stage, sandbox output with workflow commands off. */
export class ActionLogger implements Logger {
  private stopToken: string | undefined

  async group<T>(name: string, fn: () => Promise<T>): Promise<T> {
    core.startGroup(name)
    try {
      return await fn()
    } finally {
      this.resumeCommands()
      core.endGroup()
    }
  }
  info(message: string): void {
    this.resumeCommands()
    core.info(message)
  }
  warn(message: string): void {
    this.resumeCommands()
    core.warning(message)
  }
  error(message: string): void {
    this.resumeCommands()
    core.error(message)
  }
  output(phase: string, line: string): void {
    if (this.stopToken === undefined) {
      // Belt and braces: the runner ignores every command until it sees this random token again.
      this.stopToken = randomUUID().replace(/-/g, '')
      process.stdout.write(`::stop-commands::${this.stopToken}\n`)
    }
    process.stdout.write(neutralizeLine(phase, line) + '\n')
  }
  private resumeCommands(): void {
    if (this.stopToken === undefined) return
    process.stdout.write(`::${this.stopToken}::\n`)
    this.stopToken = undefined
  }
}
