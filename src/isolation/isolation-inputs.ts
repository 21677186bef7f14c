// The `isolation` input, and the policy file's `isolation-fallback` that goes with it.
import { ConfigurationError } from '../errors.js'
import { INPUT } from '../input-names.js'
import type { InputReader } from '../input-read.js'
import { FALLBACK_INPUT } from './isolation.js'
import type { IsolationRequest } from './isolation.js'

/**
 * `isolation` with the policy file's fallback (`fallback`: its `isolation-fallback`, null when it
 * sets none); nothing when `isolation` is not given and `runtime` applies as given.
 */
export function isolationFor(
  read: InputReader,
  given: InputReader,
  fallback: string | null,
  /** The event's fork decision (src/event.ts); null outside a pull request. */
  fork: boolean | null,
  /** Run locally (no event): without a base, compare with the repository's default branch. */
  local = false
): { isolation?: IsolationRequest & { fork: boolean | null } } {
  const requested = read(INPUT.isolation)
  if (given(FALLBACK_INPUT) !== undefined)
    throw new ConfigurationError(
      FALLBACK_INPUT,
      'is read from the policy file (.github/airlock.yml) only: a weaker tier is a repository decision'
    )
  if (requested === undefined) {
    if (fallback !== null)
      throw new ConfigurationError(
        FALLBACK_INPUT,
        'only applies with `isolation`; set isolation too'
      )
    return {}
  }
  const name = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
  if (!name.test(requested))
    throw new ConfigurationError(
      INPUT.isolation,
      `"${requested}" is not auto or a runtime name (runc, runsc, ...)`
    )
  if (read(INPUT.runtime) !== undefined)
    throw new ConfigurationError(
      `${INPUT.isolation}/${INPUT.runtime}`,
      'give one of them: isolation chooses the runtime (auto, or a tier by name)'
    )
  return {
    isolation: { requested, fallback, fork, ...(local ? { compareWithDefaultBranch: true } : {}) }
  }
}
