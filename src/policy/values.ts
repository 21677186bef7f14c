// The form each kind of policy setting takes, converted to the raw string an input of that name
// would carry (the input's own reader checks it again where it is read).
import YAML from 'yaml'
import { ConfigurationError } from '../errors.js'
import { memory, runtimeName } from '../input-read.js'
import { isPlainObject } from '../plain-object.js'

export type Kind =
  | 'paths'
  | 'hosts'
  | 'logins'
  | 'boolean'
  | 'size'
  | 'positive-number'
  | 'positive-integer'
  | 'non-negative-number'
  | 'runtime'
  | 'command'
  | 'services'
  | { oneOf: readonly string[] }

/** The value as an input string, or what is wrong with it (without the key). */
export function convert(kind: Kind, value: unknown): string | { error: string } {
  const shown = JSON.stringify(value)
  if (typeof kind === 'object') {
    return typeof value === 'string' && kind.oneOf.includes(value)
      ? value
      : { error: `${shown} is not one of: ${kind.oneOf.join(', ')}` }
  }
  switch (kind) {
    case 'boolean':
      return typeof value === 'boolean' ? String(value) : { error: `${shown} is not true or false` }
    case 'size':
      if (typeof value !== 'number' && typeof value !== 'string') {
        return { error: `${shown} is not a size such as 512m or 2g` }
      }
      return checked(() => {
        const raw = String(value).trim()
        memory(raw, 'memory') // throws with the form expected
        return raw
      })
    case 'positive-number':
    case 'positive-integer':
    case 'non-negative-number': {
      const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN
      const ok =
        typeof value !== 'string' || value.trim() !== ''
          ? Number.isFinite(n) &&
            (kind === 'non-negative-number' ? n >= 0 : n > 0) &&
            (kind !== 'positive-integer' || Number.isInteger(n))
          : false
      if (ok) return String(n)
      const what =
        kind === 'positive-integer'
          ? 'a whole number greater than 0'
          : kind === 'positive-number'
            ? 'a number greater than 0'
            : 'a number of 0 or more'
      return { error: `${shown} is not ${what}` }
    }
    case 'services':
      // Checked in full where the input is read; here only its shape.
      return isPlainObject(value)
        ? YAML.stringify(value)
        : { error: `${shown} is not a mapping of service name → {image, health, ...}` }
    case 'command':
      return typeof value === 'string' && value.trim() !== '' && !value.includes('\0')
        ? value
        : { error: `${shown} is not a shell command (a non-empty string)` }
    case 'runtime':
      return typeof value === 'string'
        ? checked(() => runtimeName('runtime', value))
        : { error: `${shown} is not a runtime name (e.g. runc, runsc)` }
    case 'paths':
    case 'hosts':
    case 'logins': {
      const items = typeof value === 'string' ? [value] : value
      if (!Array.isArray(items) || items.some((i) => typeof i !== 'string' || i.trim() === '')) {
        return { error: `${shown} is not a list of non-empty strings` }
      }
      const bad = (items as string[]).find((i) => !listItemOk(kind, i.trim()))
      if (bad !== undefined) return { error: `"${bad}" is not ${listItemName(kind)}` }
      return (items as string[]).map((i) => i.trim()).join('\n')
    }
  }
}

/** The value from one of the input readers, or its complaint (without the input name). */
function checked(read: () => string): string | { error: string } {
  try {
    return read()
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error
    return { error: error.message.slice(error.input.length + 2) }
  }
}

function listItemOk(kind: 'paths' | 'hosts' | 'logins', item: string): boolean {
  if (/[\n\r\0,]/.test(item)) return false
  if (kind === 'paths') return !item.startsWith('/') && !item.split('/').includes('..')
  if (kind === 'hosts') return /^(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?$/.test(item)
  // a user login, or @org/team
  return /^@?[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(\/[A-Za-z0-9_.-]+)?$/.test(item)
}

function listItemName(kind: 'paths' | 'hosts' | 'logins'): string {
  if (kind === 'paths') return 'a glob relative to the repository root (no leading /, no ..)'
  if (kind === 'hosts') return 'a host name (optionally *.domain and :port)'
  return 'a GitHub login or @org/team'
}
