import { ConfigurationError } from '../../errors.js'

/** A branch name apply may write (the `branch` and `base` inputs, the default airlock/<run id>). */
export function checkBranch(name: string, value: string): void {
  if (
    !/^[A-Za-z0-9._/-]{1,200}$/.test(value) ||
    value.startsWith('-') ||
    value.startsWith('/') ||
    value.endsWith('/') ||
    value.endsWith('.lock') ||
    value.includes('..') ||
    value.includes('//')
  ) {
    throw new ConfigurationError(name, `"${value}" is not a branch name`)
  }
}
