/** The state of the GitHub stand-in: the people, pull requests, reviews, statuses and runs it holds. */

export interface User {
  login: string
  id: number
  type: 'User' | 'Bot'
}

export interface Pull {
  number: number
  user: User
  headRef: string
  baseRef: string
  headRepo: string
  state: 'open' | 'closed'
  draft: boolean
  title: string
  body: string
  /** Head SHA of a pull request from another repository (not in the local git repository). */
  foreignHeadSha?: string
}

export interface Review {
  id: number
  pull: number
  user: User
  body: string
  state: 'PENDING' | 'COMMENTED' | 'APPROVED' | 'CHANGES_REQUESTED'
  commit_id: string
  /** When the review was submitted (none while pending). */
  submitted_at?: string
  /** The inline comments sent with the review (`comments[]` of the create request). */
  comments?: ReviewLineComment[]
}

/** A change of a branch as `GET /repos/{owner}/{repo}/activity` lists it: who moved it where. */
export interface Activity {
  id: number
  /** owner/name of the repository whose branch moved. */
  repository: string
  ref: string
  before: string
  after: string
  activity_type: 'push' | 'force_push' | 'branch_creation' | 'branch_deletion'
  actor: User
  timestamp: string
}

export interface ReviewLineComment {
  path: string
  body: string
  line: number
  side: 'LEFT' | 'RIGHT'
  start_line?: number
  start_side?: 'LEFT' | 'RIGHT'
}

export interface Status {
  id: number
  sha: string
  state: string
  context: string
  description: string | null
  target_url: string | null
  creator: User
  created_at?: string
}

export interface CheckRun {
  id: number
  head_sha: string
  name: string
  status: string
  conclusion: string | null
  details_url: string | null
  started_at: string | null
  completed_at: string | null
  output: { title: string | null; summary: string | null }
  /** Every update, in order (status and summary as they were after it). */
  history: { status: string; summary: string | null }[]
  creator: User
}

/** A job of a workflow run as `GET /actions/runs/{run_id}/jobs` lists it (a test sets them). */
export interface WorkflowJob {
  id: number
  name: string
  status: 'queued' | 'in_progress' | 'completed'
  conclusion: string | null
  started_at: string | null
  steps: { name: string; status: 'queued' | 'in_progress' | 'completed'; number: number }[]
}

export interface Comment {
  id: number
  issue: number
  user: User
  body: string
}

export interface RecordedRequest {
  method: string
  path: string
  route?: string
  body: unknown
  status: number
  user?: string
  /** The token the request was made with (a test tells jobs apart by their tokens). */
  token?: string
}

export interface Fault {
  method: string
  route: string
  /** Answer with this status (502, 422, 403...). */
  status: number
  headers?: Record<string, string>
  message?: string
  /** How many matching requests get the fault. */
  times: number
  /** Perform the request first, then answer with the fault (a lost answer). */
  afterSuccess?: boolean
}

export const ACTIONS_BOT: User = { login: 'github-actions[bot]', id: 41898282, type: 'Bot' }

/** A webhook event a write to the stand-in caused (`GitHubStandIn.events`). */
export interface RepositoryEvent {
  /** The event's name (`pull_request`, `push`, `issue_comment`, `pull_request_review`). */
  name: string
  action?: string
  /** Who caused it. */
  actor: string
  pull?: number
  /** Caused by a workflow's GITHUB_TOKEN (`github-actions[bot]`). */
  byWorkflowToken: boolean
  /** Whether GitHub starts workflow runs for it. */
  startsWorkflows: boolean
}
