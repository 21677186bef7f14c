// Readers of single inputs whose form is the project's own (the generic ones are in
// input-read.ts): a git revision, KEY=VALUE lines, the container user, the variables passed
// into the sandbox, the run id and the artifact name.
import { ConfigurationError } from '../errors.js'
import type { RunEvent } from '../event.js'
import { INPUT } from '../input-names.js'
import { list } from '../input-read.js'

const PINNED_IMAGE = /^[a-z0-9][a-z0-9._\-/:]*@sha256:[a-f0-9]{64}$/

export function checkPinnedImage(image: string): void {
  if (!PINNED_IMAGE.test(image)) {
    throw new ConfigurationError(
      INPUT.image,
      `"${image}" is not pinned by digest; use name@sha256:<64 hex digits> (docker buildx imagetools inspect NAME shows it)`
    )
  }
}

export function gitRef(raw: string): string {
  // Anything git accepts as a revision, except what could be read as an option or a range.
  if (!/^[^-\s\0][^\s\0]*$/.test(raw) || raw.includes('..')) {
    throw new ConfigurationError(INPUT.ref, `"${raw}" is not a branch, tag or commit SHA`)
  }
  return raw
}

export function keyValues(name: string, raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  if (raw === undefined) return out
  for (const line of raw.split('\n')) {
    const t = line.trim()
    if (t === '') continue
    const eq = t.indexOf('=')
    const key = eq > 0 ? t.slice(0, eq) : ''
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) {
      throw new ConfigurationError(name, `"${t}" is not KEY=VALUE (one per line)`)
    }
    out[key] = t.slice(eq + 1)
  }
  return out
}

export function containerUser(raw: string | undefined, hostUid: number): string {
  if (raw === undefined) {
    const uid = hostUid > 0 ? hostUid : 1000
    return `${uid}:${uid}`
  }
  const m = /^(\d+)(?::(\d+))?$/.exec(raw.trim())
  if (!m)
    throw new ConfigurationError(
      INPUT.user,
      `"${raw}" must be numeric uid or uid:gid (e.g. 1000:1000)`
    )
  if (m[1] === '0' || Number(m[1]) === 0) {
    throw new ConfigurationError(
      INPUT.user,
      'the sandbox never runs as root (uid 0); use a non-zero uid such as 1000'
    )
  }
  return `${Number(m[1])}:${Number(m[2] ?? m[1])}`
}

/** Variables that never enter the sandbox, whatever `env` says. */
const FORBIDDEN_ENV = [
  /^GITHUB_TOKEN$/,
  /^GH_TOKEN$/,
  /^ACTIONS_RUNTIME_TOKEN$/,
  /^ACTIONS_ID_TOKEN_REQUEST_/,
  /^ACTIONS_RESULTS_URL$/,
  /^ACTIONS_CACHE_URL$/,
  /^INPUT_/
]

/** The variables `env` names, each with its value from the host environment. */
export function passedEnv(
  raw: string | undefined,
  environment: NodeJS.ProcessEnv
): { name: string; value: string }[] {
  return list(raw).map((name) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new ConfigurationError(
        INPUT.env,
        `"${name}" is not a variable name; list names only, one per line`
      )
    }
    if (FORBIDDEN_ENV.some((re) => re.test(name))) {
      throw new ConfigurationError(
        INPUT.env,
        `"${name}" can never enter the sandbox (GitHub and Actions credentials stay outside); remove it`
      )
    }
    const value = environment[name]
    if (value === undefined) {
      throw new ConfigurationError(
        INPUT.env,
        `"${name}" is not set in the environment; set it or remove it from env`
      )
    }
    return { name, value }
  })
}

export function runId(raw: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(raw)) {
    throw new ConfigurationError(
      INPUT.runId,
      `"${raw}" may contain only letters, digits, . _ - (at most 64)`
    )
  }
  return raw
}

/** Characters the artifact service refuses in a name (the list `@actions/artifact` checks). */
const INVALID_ARTIFACT_NAME = /["<>|*?:\r\n\\/]/

export function artifactName(raw: string): string {
  if (raw.trim() === '' || INVALID_ARTIFACT_NAME.test(raw) || raw.length > 256) {
    throw new ConfigurationError(
      INPUT.artifactName,
      `"${raw}" is not a valid artifact name: at most 256 characters, none of " : < > | * ? \\ / or line breaks`
    )
  }
  return raw
}

/**
 * `airlock-<run id>-<run attempt>`: unique per workflow run and attempt, so a re-run never
 * collides with the artifact of an earlier attempt. Outside Actions: `airlock-<run-id>`.
 */
export function defaultArtifactName(event: RunEvent, fallback: string): string {
  return event.run !== undefined
    ? `airlock-${event.run.id}-${event.run.attempt}`
    : `airlock-${fallback}`
}
