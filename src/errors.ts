import { escapeHidden } from './text-filter.js'

/** A mistake in what the user configured: names the input and how to fix it. Exit code 2. */
export class ConfigurationError extends Error {
  constructor(
    readonly input: string,
    message: string
  ) {
    // The message echoes what the user (or a policy file) gave: no raw control characters reach a
    // terminal or a log.
    super(escapeHidden(`${input}: ${message}`))
    this.name = 'ConfigurationError'
  }
}

/** The environment failed us (Docker unreachable, runtime missing, disk full...). Exit code 3. */
export class InfrastructureError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'InfrastructureError'
  }
}

/**
 * The action refused what it was asked, on purpose: evidence that is invalid or does not match
 * its statement, a branch that moved since the approval, a request GitHub refused. Not a bug and
 * not the environment: the message says what stopped it and what to change.
 */
export class RefusedError extends Error {}

/** The run was cancelled (SIGINT/SIGTERM, or the job was cancelled). */
export class CancelledError extends Error {
  constructor(signal: string) {
    super(`run cancelled by ${signal}`)
    this.name = 'CancelledError'
  }
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message
  return String(error)
}

export const EXIT = {
  ok: 0,
  outcome: 1,
  configuration: 2,
  infrastructure: 3
} as const

export function exitCodeFor(error: unknown): number {
  if (error instanceof ConfigurationError) return EXIT.configuration
  return EXIT.infrastructure
}
