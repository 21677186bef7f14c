// The runner's facts, read once at the edge like the event and the inputs: the variables of the
// runner (RUNNER_*, the job's summary file, the id-token endpoint) that later code acts on. The
// entry builds this table; every later stage receives it (or a value of it), never the
// environment.

export interface Runner {
  /** RUNNER_TEMP: the job's temporary folder, when the runner has one. */
  temp?: string
  /** RUNNER_OS, RUNNER_ARCH and ImageOS, when running in GitHub Actions (GITHUB_ACTIONS=true). */
  github: { os: string | null; arch: string | null; imageOs: string | null } | null
  /** GITHUB_STEP_SUMMARY is set: the job has a summary to write. */
  stepSummary: boolean
  /** ACTIONS_ID_TOKEN_REQUEST_URL is set: the job may request an OIDC id-token (signing). */
  idToken: boolean
}

const set = (v: string | undefined): v is string => v !== undefined && v !== ''

/** The runner's facts from its variables (pure). */
export function readRunner(env: NodeJS.ProcessEnv): Runner {
  return {
    ...(set(env.RUNNER_TEMP) ? { temp: env.RUNNER_TEMP } : {}),
    github:
      env.GITHUB_ACTIONS === 'true'
        ? {
            os: env.RUNNER_OS ?? null,
            arch: env.RUNNER_ARCH ?? null,
            imageOs: env.ImageOS ?? null
          }
        : null,
    stepSummary: set(env.GITHUB_STEP_SUMMARY),
    idToken: set(env.ACTIONS_ID_TOKEN_REQUEST_URL)
  }
}
