// `progress` mode: while the run job works (minutes), the pull request shows an in-progress check
// run, `Agent Airlock: running`, whose details link is the run job's live log and whose summary
// says the job's current step and the time since it started. It is completed (neutral: the review
// replaces it) when the run job ends. It runs in a job of its own holding `checks: write` and
// `actions: read` only: a check run cannot set the gate, which is a commit status.
import { ConfigurationError } from '../../errors.js'
import type { InputReader } from '../../input-read.js'
import { INPUT } from '../../input-names.js'
import type { Logger } from '../../log.js'
import { repositoryOf, runUrl as runPage } from '../../event.js'
import type { GitHubClient } from '../client/client.js'
import { connect } from './common.js'
import { getGitHubInputs, type ModeEnv } from './inputs.js'

export const PROGRESS_CHECK_NAME = 'Agent Airlock: running'
/** The job it follows: the reusable workflow's `run` job (`<caller job> / run` in the API). */
export const WATCHED_JOB = 'run'

export interface ProgressOptions {
  /** Between two looks at the run job. */
  intervalMs: number
  /** The longest the mode watches (a job never runs longer than 6 hours on GitHub). */
  maxMs: number
  /** Consecutive failed looks after which it stops watching. */
  maxFailures: number
  /**
   * Told the check run's API address once it exists, and '' once it is completed: the post step
   * completes a check run its cancelled job left in progress (src/cleanup-step.ts).
   */
  remember?: (checkRunUrl: string) => void
}

export const PROGRESS_DEFAULTS: ProgressOptions = {
  intervalMs: 10_000,
  maxMs: 6 * 60 * 60 * 1000,
  maxFailures: 6
}

interface Job {
  id: number
  name: string
  status: string
  conclusion: string | null
  started_at?: string | null
  html_url: string | null
  steps?: { name: string; status: string; number: number }[]
}

/** The watched job among the run's jobs: by its name, or `caller / name` in a called workflow. */
export function findJob(jobs: Job[], name: string): Job | undefined {
  const matches = jobs.filter((j) => j.name === name || j.name.endsWith(` / ${name}`))
  return matches.sort((a, b) => b.id - a.id)[0]
}

/** One line of where the job is: its current step and how long it has run. */
export function progressSummary(job: Job | undefined, now: number): string {
  if (job === undefined || job.status === 'queued' || job.status === 'waiting')
    return 'The agent job is waiting for a runner.'
  const step = (job.steps ?? []).find((s) => s.status === 'in_progress')
  const started = job.started_at ? Date.parse(job.started_at) : NaN
  const elapsed = Number.isFinite(started) ? elapsedText(now - started) : undefined
  return [
    step !== undefined ? `Step: **${oneLine(step.name)}**` : 'Between steps',
    elapsed !== undefined ? `running for ${elapsed}` : undefined
  ]
    .filter(Boolean)
    .join(' · ')
    .concat('. The live log is behind Details; the review replaces this check when the run ends.')
}

function elapsedText(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000))
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`
}

function oneLine(s: string): string {
  return [...s.slice(0, 120)]
    .map((c) => (c.charCodeAt(0) < 0x20 || '`*_[]<>'.includes(c) ? ' ' : c))
    .join('')
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

export async function progressMode(
  read: InputReader,
  log: Logger,
  env: ModeEnv,
  options: ProgressOptions = PROGRESS_DEFAULTS,
  client?: GitHubClient
): Promise<void> {
  const inputs = getGitHubInputs(read, env.workspace, { tokenRequired: true })
  const repo = repositoryOf(env.event)
  const ref = read(INPUT.ref)?.trim()
  const headSha =
    ref !== undefined && /^[0-9a-f]{40}$/.test(ref) ? ref : env.event.pullRequest?.headSha
  if (headSha === undefined) {
    throw new ConfigurationError(
      INPUT.ref,
      'progress mode needs the commit to show the check on: a full commit SHA in `ref` (e.g. ${{ github.event.pull_request.head.sha || github.sha }})'
    )
  }
  const runId = env.event.run?.id
  const runUrl = runPage(env.event)
  if (runId === undefined || runUrl === undefined)
    throw new Error('GITHUB_RUN_ID is not set: progress runs on a runner')
  const octokit = client ?? connect(inputs, env, log, false).octokit
  const lookAtJob = async (): Promise<Job | undefined> => {
    const res = await octokit.request('GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs', {
      ...repo,
      run_id: Number(runId),
      filter: 'latest',
      per_page: 100
    })
    return findJob(res.data.jobs as Job[], WATCHED_JOB)
  }

  const began = Date.now()
  let job = await lookAtJob().catch(() => undefined)
  const created = await octokit.request('POST /repos/{owner}/{repo}/check-runs', {
    ...repo,
    name: PROGRESS_CHECK_NAME,
    head_sha: headSha,
    status: 'in_progress',
    started_at: new Date(began).toISOString(),
    details_url: job?.html_url ?? runUrl,
    output: { title: 'The agent is working', summary: progressSummary(job, Date.now()) }
  })
  const id = created.data.id
  options.remember?.(
    `${String(octokit.request.endpoint.DEFAULTS.baseUrl).replace(/\/+$/, '')}/repos/${repo.owner}/${repo.repo}/check-runs/${id}`
  )
  log.info(`progress: check run ${id} on ${headSha} follows job "${WATCHED_JOB}"`)
  let failures = 0
  let ended: 'completed' | 'timeout' | 'lost' = 'timeout'
  while (Date.now() - began < options.maxMs) {
    if (job?.status === 'completed') {
      ended = 'completed'
      break
    }
    await sleep(options.intervalMs)
    try {
      job = await lookAtJob()
      failures = 0
    } catch (error) {
      failures++
      log.warn(`progress: could not read the run's jobs (${String(error)})`)
      if (failures >= options.maxFailures) {
        ended = 'lost'
        break
      }
      continue
    }
    if (job?.status === 'completed') continue
    await octokit.request('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', {
      ...repo,
      check_run_id: id,
      ...(job?.html_url ? { details_url: job.html_url } : {}),
      output: { title: 'The agent is working', summary: progressSummary(job, Date.now()) }
    })
  }
  const why =
    ended === 'completed'
      ? `The agent job ended (${job?.conclusion ?? 'unknown'}); the review on the pull request replaces this check.`
      : ended === 'lost'
        ? "The run's jobs could not be read; this check stopped following them. The review replaces this check."
        : 'This check stopped following the run at its time limit. The review replaces this check.'
  await octokit.request('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', {
    ...repo,
    check_run_id: id,
    status: 'completed',
    conclusion: 'neutral',
    completed_at: new Date().toISOString(),
    output: { title: 'Finished: see the review', summary: why }
  })
  options.remember?.('')
  log.info(`progress: check run ${id} completed (${ended})`)
}
