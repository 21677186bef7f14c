// The generic readers of raw inputs (action inputs, CLI flags, policy file values): each names
// the input in its ConfigurationError and says what form it expects.
import { ConfigurationError } from './errors.js'
import { INPUT } from './input-names.js'

/** Reads one raw input; absent or empty → undefined. */
export type InputReader = (name: string) => string | undefined

/**
 * Splits a list input, the one splitter of every list: one item per line, or comma-separated
 * (`commas: false` for items that may hold commas, such as credential routes); blank items and
 * `#` comment lines dropped.
 */
export function list(raw: string | undefined, options: { commas?: boolean } = {}): string[] {
  if (raw === undefined) return []
  return raw
    .split(options.commas === false ? /\n/ : /[\n,]/)
    .map((s) => s.trim())
    .filter((s) => s !== '' && !s.startsWith('#'))
}

export function bool(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined) return fallback
  const v = raw.trim().toLowerCase()
  if (v === 'true') return true
  if (v === 'false') return false
  throw new ConfigurationError(name, `"${raw}" is not a boolean; use true or false`)
}

export function oneOf<T extends string>(name: string, raw: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(raw)) return raw as T
  throw new ConfigurationError(name, `"${raw}" is not one of: ${allowed.join(', ')}`)
}

export function positiveNumber(name: string, raw: string): number {
  const n = Number(raw.trim())
  if (raw.trim() === '' || !Number.isFinite(n) || n <= 0) {
    throw new ConfigurationError(name, `"${raw}" must be a number greater than 0`)
  }
  return n
}

export function nonNegativeNumber(name: string, raw: string): number {
  const n = Number(raw.trim())
  if (raw.trim() === '' || !Number.isFinite(n) || n < 0) {
    throw new ConfigurationError(name, `"${raw}" must be a number of 0 or more`)
  }
  return n
}

export function positiveInteger(name: string, raw: string): number {
  const n = positiveNumber(name, raw)
  if (!Number.isInteger(n))
    throw new ConfigurationError(name, `"${raw}" must be a whole number greater than 0`)
  if (!Number.isSafeInteger(n))
    throw new ConfigurationError(
      name,
      `"${raw}" must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER}`
    )
  return n
}

const RUNTIME_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

/** An OCI runtime name as Docker knows it (runc, runsc, kata-runtime...). */
export function runtimeName(name: string, raw: string): string {
  if (!RUNTIME_NAME.test(raw)) {
    throw new ConfigurationError(name, `"${raw}" is not a runtime name (e.g. runc, runsc)`)
  }
  return raw
}

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }
const MIN_MEMORY = 6 * 1024 * 1024

/** "512m", "2g", "1073741824" → bytes; at least 6 MiB (Docker's minimum). */
export function memory(raw: string, name: string = INPUT.memory): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([bkmg]?)i?b?\s*$/i.exec(raw)
  const unit = m?.[2]?.toLowerCase() ?? ''
  if (!m || !(unit in UNITS)) {
    throw new ConfigurationError(
      name,
      `"${raw}" is not a size; use a positive amount such as 512m or 2g`
    )
  }
  const bytes = Math.floor(Number(m[1]) * UNITS[unit])
  if (!Number.isSafeInteger(bytes)) {
    throw new ConfigurationError(name, `"${raw}" is too large; use a size such as 2g`)
  }
  if (bytes < MIN_MEMORY) {
    throw new ConfigurationError(name, `"${raw}" is below Docker's minimum of 6m; use at least 6m`)
  }
  return bytes
}

/**
 * A size within [min, max] bytes: "64m", "4g", "1073741824" (k/m/g are powers of 1024;
 * "4gb" and "4GiB" read the same). Anything else names the input and the expected form.
 */
export function size(name: string, raw: string, min: number, max: number): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([bkmg]?)(?:i?b)?\s*$/i.exec(raw)
  const form = `use a size such as 512m or 4g (between ${min / 1024 ** 2}m and ${max / 1024 ** 3}g)`
  if (!m) throw new ConfigurationError(name, `"${raw}" is not a size; ${form}`)
  const bytes = Math.floor(Number(m[1]) * (UNITS[(m[2] ?? '').toLowerCase()] ?? NaN))
  if (!Number.isSafeInteger(bytes) || bytes > max)
    throw new ConfigurationError(name, `"${raw}" is too large; ${form}`)
  if (bytes < min) throw new ConfigurationError(name, `"${raw}" is too small; ${form}`)
  return bytes
}
