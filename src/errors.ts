/** A mistake in what the user configured: names the input and how to fix it. Exit code 2. */
export class ConfigurationError extends Error {
  constructor(
    readonly input: string,
    message: string
  ) {
    // The message echoes what the user (or a policy file) gave: no raw control characters reach a
    // terminal or a log.
    super(escapeControls(`${input}: ${message}`))
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

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/** Control, line-separator and bidi characters written as visible escapes (\x1b, \u202e). */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, (c) => {
    const code = c.charCodeAt(0)
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`
  })
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
