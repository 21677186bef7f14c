/**
 * A local stand-in of GitHub's REST API for end-to-end tests of the bundled action.
 *
 * Every request is checked against GitHub's published OpenAPI description (`@octokit/openapi`):
 * the route must exist for the method, the JSON body must validate against the operation's
 * request body schema, and no top-level field GitHub would ignore may be sent. Anything else is
 * answered as GitHub would (404/422) and recorded in `violations`, which the tests require to be
 * empty. Behind the routes the action uses is real state: pull requests, reviews (with GitHub's
 * one-pending-review-per-user rule), issue comments, statuses, collaborators' permissions, and a
 * real bare git repository for the Git Data API.
 */
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as http from 'node:http'
import type { AddressInfo } from 'node:net'
import * as os from 'node:os'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { Ajv } from 'ajv'
import type { ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'

const require = createRequire(import.meta.url)

// ---- the OpenAPI description ---------------------------------------------------------------

interface Operation {
  method: string
  template: string
  regex: RegExp
  params: string[]
  literalSegments: number
  bodySchema?: Record<string, unknown>
  bodyRequired: boolean
}

type Spec = {
  paths: Record<string, Record<string, { requestBody?: unknown; parameters?: unknown[] }>>
  components: Record<string, Record<string, unknown>>
}

let spec: Spec | undefined
let operations: Operation[] | undefined
let ajv: Ajv | undefined
const validators = new Map<Operation, ValidateFunction>()

function loadSpec(): { spec: Spec; operations: Operation[]; ajv: Ajv } {
  if (spec && operations && ajv) return { spec, operations, ajv }
  spec = JSON.parse(
    fs.readFileSync(require.resolve('@octokit/openapi/generated/api.github.com.json'), 'utf8')
  ) as Spec
  ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false })
  const addFormats = addFormatsModule as unknown as (a: Ajv) => void
  addFormats(ajv)
  ajv.addSchema({ $id: 'gh', components: spec.components })
  operations = []
  for (const [template, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue
      const params: string[] = []
      const segments = template.split('/')
      const pattern = segments
        .map((seg, i) => {
          const m = /^\{(.+)\}$/.exec(seg)
          if (!m) return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
          params.push(m[1])
          // A last parameter may hold slashes (git refs such as heads/feature).
          return i === segments.length - 1 ? '(.+)' : '([^/]+)'
        })
        .join('/')
      let body = op.requestBody as
        | { $ref?: string; required?: boolean; content?: Record<string, { schema?: unknown }> }
        | undefined
      if (body?.$ref) {
        const name = body.$ref.split('/').pop() as string
        body = spec.components.requestBodies[name] as typeof body
      }
      const schema = body?.content?.['application/json']?.schema as
        Record<string, unknown> | undefined
      operations.push({
        method: method.toUpperCase(),
        template,
        regex: new RegExp(`^${pattern}$`),
        params,
        literalSegments: segments.filter((s) => !s.startsWith('{')).length,
        bodySchema: schema,
        bodyRequired: body?.required === true
      })
    }
  }
  operations.sort((a, b) => b.literalSegments - a.literalSegments)
  return { spec, operations, ajv }
}

function validatorFor(op: Operation, a: Ajv): ValidateFunction | undefined {
  if (!op.bodySchema) return undefined
  let v = validators.get(op)
  if (!v) {
    const schema = JSON.parse(
      JSON.stringify(op.bodySchema).replace(/"\$ref":"#\/components/g, '"$ref":"gh#/components')
    ) as Record<string, unknown>
    v = a.compile(schema)
    validators.set(op, v)
  }
  return v
}

/** Top-level properties of an object schema (following one $ref), or undefined when open. */
function knownProperties(schema: Record<string, unknown>, s: Spec): Set<string> | undefined {
  let sch = schema
  if (typeof sch.$ref === 'string') {
    const name = sch.$ref.split('/').pop() as string
    sch = s.components.schemas[name] as Record<string, unknown>
  }
  if (sch.type !== 'object' || typeof sch.properties !== 'object' || sch.properties === null)
    return undefined
  return new Set(Object.keys(sch.properties))
}

/**
 * The GITHUB_TOKEN permission scope(s) a route needs (any one of them), or undefined for what
 * every token may read (metadata, collaborators).
 */
function scopeOf(template: string): string[] | undefined {
  const t = template.replace(/^\/repos\/\{owner\}\/\{repo\}/, '')
  if (/^\/check-(runs|suites)/.test(t)) return ['checks']
  if (t.startsWith('/actions/')) return ['actions']
  if (/^\/statuses\/|^\/commits\/\{ref\}\/status/.test(t)) return ['statuses']
  if (t.startsWith('/pulls')) return ['pull-requests']
  if (t.startsWith('/issues')) return ['issues', 'pull-requests']
  if (/^\/(git|contents|commits)\b/.test(t)) return ['contents']
  return undefined
}

// ---- state ---------------------------------------------------------------------------------

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

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = Record<string, any>

/** The running stand-ins by their address (see GitHubStandIn.at). */
const RUNNING = new Map<string, GitHubStandIn>()

export interface Review {
  id: number
  pull: number
  user: User
  body: string
  /** DISMISSED: a review someone with write access dismissed (it no longer approves or blocks). */
  state: 'PENDING' | 'COMMENTED' | 'APPROVED' | 'CHANGES_REQUESTED' | 'DISMISSED'
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
  /** When it was written (ISO 8601); set by the stand-in when the comment is posted or added. */
  created_at?: string
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

export class GitHubStandIn {
  readonly owner: string
  readonly repo: string
  readonly gitDir: string
  readonly requests: RecordedRequest[] = []
  readonly violations: string[] = []
  readonly tokens = new Map<string, User>()
  /**
   * A job token's permissions (scope → read | write), as GitHub gives GITHUB_TOKEN from the job's
   * `permissions:`: a request outside them is answered 403 as GitHub answers it. A token not in
   * this map may do anything its user may.
   */
  readonly tokenPermissions = new Map<string, Record<string, 'read' | 'write'>>()
  readonly permissions = new Map<string, 'admin' | 'maintain' | 'write' | 'triage' | 'read'>()
  readonly pulls = new Map<number, Pull>()
  readonly reviews: Review[] = []
  readonly statuses: Status[] = []
  readonly checkRuns: CheckRun[] = []
  /** The jobs of each workflow run, by run id: what the Actions API answers about them. */
  readonly workflowJobs = new Map<string, WorkflowJob[]>()
  readonly comments: Comment[] = []
  /** Pushes and branch creations (the repository activity API), oldest first. */
  readonly activity: Activity[] = []
  /** Commit e-mail addresses linked to accounts (how GitHub names a commit's author). */
  readonly emails = new Map<string, User>()
  readonly faults: Fault[] = []
  /** Members of teams: `org/team-slug` → logins with an active membership. */
  readonly teams = new Map<string, string[]>()
  /**
   * Replies in the threads of reviews' inline comments (a test adds them: people answering a
   * finding). `inReplyTo` is the id `GET /pulls/{n}/comments` gives the inline comment (see
   * reviewCommentId).
   */
  readonly reviewReplies: {
    id: number
    pull: number
    inReplyTo: number
    user: User
    body: string
    created_at: string
  }[] = []
  /** Reactions added to issue comments. */
  readonly reactions: { commentId: number; content: string; user: string }[] = []
  /** Answer GraphQL with an error (the viewer cannot be read). */
  graphqlFails = false
  /** Called before a request is handled (after validation): lets a test change the world mid-run. */
  beforeRoute?: (route: string) => void
  /** Hold the first N matching requests until N have arrived (to force a race). */
  barrier?: { method: string; route: string; count: number; waiting: (() => void)[] }
  private server?: http.Server
  private nextId = 1000
  url = ''

  constructor(options: { owner: string; repo: string; gitDir: string }) {
    this.owner = options.owner
    this.repo = options.repo
    this.gitDir = options.gitDir
    loadSpec()
  }

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      void this.handle(req, res).catch((error: unknown) => {
        this.violations.push(`stand-in crashed on ${req.method} ${req.url}: ${String(error)}`)
        res.writeHead(500, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ message: 'stand-in error' }))
      })
    })
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    RUNNING.set(this.url, this)
    return this.url
  }

  /** The running stand-in at `url` (what a runner emulation delivers events to), if any. */
  static at(url: string): GitHubStandIn | undefined {
    return RUNNING.get(url)
  }

  /**
   * GitHub sends an `issue_comment` or `pull_request_review` webhook after the comment or review
   * exists: the one the payload names is added to the state when it is not there yet (by its
   * id), with the payload's author, body and time — so what the action reads back from the API
   * is what the event announced.
   */
  deliver(eventName: string, payload: Record<string, unknown>): void {
    const o = (v: unknown): Loose | undefined =>
      typeof v === 'object' && v !== null ? (v as Loose) : undefined
    const userOf = (u: Loose | undefined): User => ({
      login: String(u?.login ?? 'ghost'),
      id: typeof u?.id === 'number' ? u.id : 1,
      type: u?.type === 'Bot' ? 'Bot' : 'User'
    })
    if (eventName === 'issue_comment' && payload.action === 'created') {
      const c = o(payload.comment)
      const issue = o(payload.issue)?.number
      if (c === undefined || typeof c.id !== 'number' || typeof issue !== 'number') return
      if (this.comments.some((x) => x.id === c.id)) return
      this.comments.push({
        id: c.id,
        issue,
        user: userOf(o(c.user)),
        body: String(c.body ?? ''),
        ...(typeof c.created_at === 'string' ? { created_at: c.created_at } : {})
      })
    }
    if (eventName === 'pull_request_review' && payload.action === 'submitted') {
      const r = o(payload.review)
      const pull = o(payload.pull_request)?.number
      if (r === undefined || typeof r.id !== 'number' || typeof pull !== 'number') return
      if (this.reviews.some((x) => x.id === r.id)) return
      const state = String(r.state ?? '').toUpperCase()
      if (state !== 'APPROVED' && state !== 'CHANGES_REQUESTED' && state !== 'COMMENTED') return
      this.reviews.push({
        id: r.id,
        pull,
        user: userOf(o(r.user)),
        body: String(r.body ?? ''),
        state,
        commit_id: String(r.commit_id ?? ''),
        ...(typeof r.submitted_at === 'string' ? { submitted_at: r.submitted_at } : {})
      })
    }
  }

  async stop(): Promise<void> {
    if (RUNNING.get(this.url) === this) RUNNING.delete(this.url)
    this.server?.closeAllConnections()
    await new Promise<void>((resolve) => this.server?.close(() => resolve()))
  }

  /**
   * Saves the state a test can change (requests and violations, tokens, permissions, teams, pull
   * requests, reviews, statuses, comments, reactions, faults, the switches, the git refs) and
   * returns the function that puts it back: tests that share one running stand-in each start
   * from the saved state, whatever the test before them did.
   */
  snapshot(): () => void {
    const saved = structuredClone({
      requests: this.requests,
      violations: this.violations,
      tokens: this.tokens,
      permissions: this.permissions,
      pulls: this.pulls,
      reviews: this.reviews,
      statuses: this.statuses,
      comments: this.comments,
      activity: this.activity,
      emails: this.emails,
      faults: this.faults,
      teams: this.teams,
      reactions: this.reactions
    })
    const { graphqlFails, beforeRoute, barrier, nextId } = this
    const refs = (): Map<string, string> =>
      new Map(
        this.git(['for-each-ref', '--format=%(refname) %(objectname)'])
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => l.split(' ') as [string, string])
      )
    const savedRefs = refs()
    const refill = <T>(into: T[], from: T[]): void => {
      into.splice(0, into.length, ...structuredClone(from))
    }
    const remap = <K, V>(into: Map<K, V>, from: Map<K, V>): void => {
      into.clear()
      for (const [k, v] of structuredClone(from)) into.set(k, v)
    }
    return () => {
      refill(this.requests, saved.requests)
      refill(this.violations, saved.violations)
      remap(this.tokens, saved.tokens)
      remap(this.permissions, saved.permissions)
      remap(this.pulls, saved.pulls)
      refill(this.reviews, saved.reviews)
      refill(this.statuses, saved.statuses)
      refill(this.comments, saved.comments)
      refill(this.activity, saved.activity)
      remap(this.emails, saved.emails)
      refill(this.faults, saved.faults)
      remap(this.teams, saved.teams)
      refill(this.reactions, saved.reactions)
      this.graphqlFails = graphqlFails
      this.beforeRoute = beforeRoute
      this.barrier = barrier
      this.nextId = nextId
      for (const ref of refs().keys()) if (!savedRefs.has(ref)) this.git(['update-ref', '-d', ref])
      for (const [ref, sha] of savedRefs) this.git(['update-ref', ref, sha])
    }
  }

  /** Requests that change something (anything but GET/HEAD and GraphQL queries). */
  writes(): RecordedRequest[] {
    return this.requests.filter(
      (r) =>
        r.method !== 'GET' &&
        r.method !== 'HEAD' &&
        // A GraphQL query reads; only a mutation would change something.
        !(
          r.route === 'POST /graphql' &&
          !/^\s*mutation\b/.test(String((r.body as { query?: unknown })?.query))
        )
    )
  }

  git(args: string[], input?: Buffer | string): string {
    return execFileSync('git', args, {
      env: {
        ...process.env,
        GIT_DIR: this.gitDir,
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_CONFIG_NOSYSTEM: '1'
      },
      input,
      maxBuffer: 64 * 1024 * 1024
    }).toString('utf8')
  }

  /** `GET /pulls/{pull_number}/files`: the three-dot diff of base and head, one entry per file. */
  pullFiles(pull: Pull): Record<string, unknown>[] {
    let head: string
    try {
      head = this.headSha(pull)
      this.git(['cat-file', '-e', `${head}^{commit}`])
    } catch {
      return []
    }
    const range = `refs/heads/${pull.baseRef}...${head}`
    const names = this.git(['diff', '--no-renames', '--name-status', '-z', range])
      .split('\0')
      .filter((x) => x !== '')
    const out: Record<string, unknown>[] = []
    for (let i = 0; i + 1 < names.length; i += 2) {
      const [code, filename] = [names[i], names[i + 1]]
      const full = this.git([
        'diff',
        '--no-renames',
        '--no-color',
        '--no-ext-diff',
        range,
        '--',
        filename
      ])
      const at = full.indexOf('\n@@')
      const patch = at >= 0 ? full.slice(at + 1).replace(/\n$/, '') : undefined
      const add = patch?.split('\n').filter((l) => l.startsWith('+')).length ?? 0
      const del = patch?.split('\n').filter((l) => l.startsWith('-')).length ?? 0
      out.push({
        sha: '0'.repeat(40),
        filename,
        status: code === 'A' ? 'added' : code === 'D' ? 'removed' : 'modified',
        additions: add,
        deletions: del,
        changes: add + del,
        blob_url: `https://github.com/${this.owner}/${this.repo}/blob/${head}/${filename}`,
        raw_url: `https://github.com/${this.owner}/${this.repo}/raw/${head}/${filename}`,
        contents_url: `https://api.github.com/repos/${this.owner}/${this.repo}/contents/${filename}?ref=${head}`,
        ...(patch !== undefined ? { patch } : {})
      })
    }
    return out
  }

  headSha(pull: Pull): string {
    return pull.foreignHeadSha ?? this.git(['rev-parse', `refs/heads/${pull.headRef}`]).trim()
  }

  /**
   * A new commit on a branch (a push): the head moves. `pusher` is who pushed (recorded in the
   * activity; by default the opener of the pull request with this head branch); `author` and
   * `committer` are the commit's e-mail addresses (`emails` links them to accounts).
   */
  push(
    branch: string,
    message = 'another commit',
    o: { pusher?: User; author?: string; committer?: string } = {}
  ): string {
    const parent = this.git(['rev-parse', `refs/heads/${branch}`]).trim()
    const tree = this.git(['rev-parse', `${parent}^{tree}`]).trim()
    const sha = execFileSync('git', ['commit-tree', tree, '-p', parent, '-m', message], {
      env: {
        ...process.env,
        GIT_DIR: this.gitDir,
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_AUTHOR_NAME: 'Dev',
        GIT_AUTHOR_EMAIL: o.author ?? 'dev@example.com',
        GIT_COMMITTER_NAME: 'Dev',
        GIT_COMMITTER_EMAIL: o.committer ?? o.author ?? 'dev@example.com'
      }
    })
      .toString('utf8')
      .trim()
    this.git(['update-ref', `refs/heads/${branch}`, sha])
    const pusher =
      o.pusher ??
      [...this.pulls.values()].find((p) => p.headRef === branch && !p.foreignHeadSha)?.user
    if (pusher) this.recordPush(branch, parent, sha, pusher, 'push')
    return sha
  }

  /** Records a move of `branch` of this repository in the activity list. */
  recordPush(
    branch: string,
    before: string,
    after: string,
    actor: User,
    type: Activity['activity_type'],
    repository = `${this.owner}/${this.repo}`
  ): void {
    this.activity.push({
      id: this.nextId++,
      repository,
      ref: `refs/heads/${branch}`,
      before,
      after,
      activity_type: type,
      actor,
      timestamp: new Date().toISOString()
    })
  }

  // ---- HTTP --------------------------------------------------------------------------------

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    const method = req.method ?? 'GET'
    const url = new URL(req.url ?? '/', 'http://x')
    const record: RecordedRequest = { method, path: url.pathname, body: undefined, status: 0 }
    this.requests.push(record)
    const send = (status: number, data: unknown, headers: Record<string, string> = {}): void => {
      record.status = status
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
      res.end(data === undefined ? '' : JSON.stringify(data))
    }
    if (method === 'POST' && url.pathname === '/graphql')
      return this.graphql(req, raw, record, send)
    const { spec: s, operations: ops, ajv: a } = loadSpec()
    const op = ops.find((o) => o.method === method && o.regex.test(url.pathname))
    if (!op) {
      this.violations.push(`unknown route: ${method} ${url.pathname}`)
      return send(404, { message: 'Not Found' })
    }
    record.route = `${method} ${op.template}`
    const params: Record<string, string> = {}
    const m = op.regex.exec(url.pathname) as RegExpExecArray
    op.params.forEach((p, i) => (params[p] = decodeURIComponent(m[i + 1])))
    let body: unknown = undefined
    if (raw !== '') {
      try {
        body = JSON.parse(raw)
      } catch {
        this.violations.push(`${record.route}: body is not JSON`)
        return send(400, { message: 'Problems parsing JSON' })
      }
    }
    record.body = body
    const validate = validatorFor(op, a)
    if (body !== undefined && !op.bodySchema) {
      this.violations.push(`${record.route}: sent a body to an operation that takes none`)
    }
    if (validate) {
      if (body === undefined && op.bodyRequired) {
        this.violations.push(`${record.route}: request body required`)
        return send(422, { message: 'Invalid request' })
      }
      if (body !== undefined && !validate(body)) {
        this.violations.push(`${record.route}: ${a.errorsText(validate.errors)}`)
        return send(422, { message: `Invalid request: ${a.errorsText(validate.errors)}` })
      }
      const known = op.bodySchema ? knownProperties(op.bodySchema, s) : undefined
      if (known && typeof body === 'object' && body !== null) {
        for (const k of Object.keys(body)) {
          if (!known.has(k)) this.violations.push(`${record.route}: unknown field "${k}"`)
        }
      }
    }
    for (const [name, value] of Object.entries(params)) {
      if (/_number$|_id$/.test(name) && !/^\d+$/.test(value)) {
        this.violations.push(`${record.route}: ${name} "${value}" is not a number`)
        return send(404, { message: 'Not Found' })
      }
    }
    const forkActivity =
      op.template === '/repos/{owner}/{repo}/activity' &&
      [...this.pulls.values()].some((x) => x.headRepo === `${params.owner}/${params.repo}`)
    if (
      params.owner !== undefined &&
      (params.owner !== this.owner || params.repo !== this.repo) &&
      !forkActivity
    ) {
      return send(404, { message: 'Not Found' })
    }
    const auth = req.headers.authorization ?? ''
    const token = /^(?:token|bearer) (.+)$/i.exec(auth)?.[1]
    const user = token ? this.tokens.get(token) : undefined
    if (!user) return send(401, { message: 'Bad credentials' })
    record.user = user.login
    record.token = token
    const granted = token !== undefined ? this.tokenPermissions.get(token) : undefined
    const scope = scopeOf(op.template)
    if (granted !== undefined && scope !== undefined) {
      const need = method === 'GET' || method === 'HEAD' ? 1 : 2
      const has = Math.max(
        ...scope.map((x) => (granted[x] === 'write' ? 2 : granted[x] === 'read' ? 1 : 0))
      )
      if (has < need) return send(403, { message: 'Resource not accessible by integration' })
    }

    const fault = this.faults.find(
      (f) => f.times > 0 && f.method === method && f.route === op.template
    )
    if (fault && !fault.afterSuccess) {
      fault.times--
      return send(fault.status, { message: fault.message ?? 'fault' }, fault.headers)
    }
    if (this.barrier && this.barrier.method === method && this.barrier.route === op.template) {
      const b = this.barrier
      await new Promise<void>((resolve) => {
        b.waiting.push(resolve)
        if (b.waiting.length >= b.count) {
          this.barrier = undefined
          for (const w of b.waiting) w()
        }
      })
    }
    this.beforeRoute?.(`${method} ${op.template}`)
    const [status, data, headers] = this.route(op.template, method, params, body, user, url)
    if (fault?.afterSuccess && status < 300) {
      fault.times--
      return send(fault.status, { message: fault.message ?? 'fault' }, fault.headers)
    }
    send(status, data, headers)
  }

  /**
   * GraphQL is not in the REST description: the one query the action sends (`viewer { login }`)
   * is answered as GitHub does — with the token's login, `<slug>[bot]` for an App installation
   * token — and anything else is a violation.
   */
  private graphql(
    req: http.IncomingMessage,
    raw: string,
    record: RecordedRequest,
    send: (status: number, data: unknown) => void
  ): void {
    record.route = 'POST /graphql'
    let body: unknown
    try {
      body = JSON.parse(raw)
    } catch {
      this.violations.push('POST /graphql: body is not JSON')
      return send(400, { message: 'Problems parsing JSON' })
    }
    record.body = body
    const b = body as Record<string, unknown>
    if (
      typeof b !== 'object' ||
      b === null ||
      typeof b.query !== 'string' ||
      Object.keys(b).some((k) => k !== 'query' && k !== 'variables')
    ) {
      this.violations.push(`POST /graphql: not a GraphQL request: ${raw.slice(0, 200)}`)
      return send(400, { message: 'A query attribute must be specified' })
    }
    const token = /^(?:token|bearer) (.+)$/i.exec(req.headers.authorization ?? '')?.[1]
    const user = token ? this.tokens.get(token) : undefined
    if (!user) return send(401, { message: 'Bad credentials' })
    record.user = user.login
    if (this.graphqlFails) return send(502, { message: 'Server Error' })
    if (!/^\s*(query\s*)?\{\s*viewer\s*\{\s*login\s*\}\s*\}\s*$/.test(b.query)) {
      this.violations.push(`POST /graphql: the stand-in answers only viewer { login }: ${b.query}`)
      return send(200, { errors: [{ message: 'not implemented by the stand-in' }] })
    }
    record.status = 200
    send(200, { data: { viewer: { login: user.login } } })
  }

  private route(
    template: string,
    method: string,
    p: Record<string, string>,
    body: unknown,
    user: User,
    url: URL
  ): [number, unknown, Record<string, string>?] {
    const b = (body ?? {}) as Record<string, unknown>
    const key = `${method} ${template.replace('/repos/{owner}/{repo}', '')}`
    const pull = p.pull_number !== undefined ? this.pulls.get(Number(p.pull_number)) : undefined
    const notFound: [number, unknown] = [404, { message: 'Not Found' }]
    switch (key) {
      case 'GET /user':
        if (user.type === 'Bot') return [403, { message: 'Resource not accessible by integration' }]
        return [200, this.userJson(user)]
      case 'GET /collaborators/{username}/permission': {
        const perm = this.permissions.get(p.username)
        if (!perm) return [404, { message: 'Not Found' }]
        const legacy = perm === 'maintain' ? 'write' : perm === 'triage' ? 'read' : perm
        return [
          200,
          {
            permission: legacy,
            role_name: perm,
            user: this.userJson({ login: p.username, id: 1, type: 'User' })
          }
        ]
      }
      case 'GET /contents/{path}': {
        // A file of the repository at ?ref= (what the policy loader reads from the base commit).
        const file = decodeURIComponent(p.path)
        const ref = url.searchParams.get('ref') ?? 'refs/heads/main'
        let commit: string
        try {
          commit = this.git(['rev-parse', '--verify', '--end-of-options', `${ref}^{commit}`]).trim()
        } catch {
          return [404, { message: `No commit found for the ref ${ref}` }]
        }
        let entry: string
        try {
          entry = this.git(['ls-tree', '--full-tree', commit, '--', file]).trim()
        } catch {
          entry = ''
        }
        const m = /^(\d+) blob ([0-9a-f]{40})\t/.exec(entry)
        if (!m) return notFound
        const content = Buffer.from(this.git(['cat-file', 'blob', m[2]]), 'utf8')
        const type = m[1] === '120000' ? 'symlink' : 'file'
        return [
          200,
          {
            type,
            encoding: 'base64',
            size: content.length,
            name: file.split('/').pop(),
            path: file,
            sha: m[2],
            content: content.toString('base64'),
            url: `${this.url}/repos/${this.owner}/${this.repo}/contents/${file}`,
            git_url: null,
            html_url: null,
            download_url: null,
            _links: { self: '', git: null, html: null }
          }
        ]
      }
      case 'GET /orgs/{org}/teams/{team_slug}/memberships/{username}': {
        // Reading another organisation's teams needs members:read; GITHUB_TOKEN has no such scope.
        if (user.login === ACTIONS_BOT.login)
          return [403, { message: 'Resource not accessible by integration' }]
        const members = this.teams.get(`${p.org}/${p.team_slug}`)
        if (!members?.includes(p.username)) return notFound
        return [
          200,
          {
            url: '',
            role: 'member',
            state: 'active'
          }
        ]
      }
      case 'GET /pulls/{pull_number}':
        return pull ? [200, this.pullJson(pull)] : notFound
      case 'GET /pulls/{pull_number}/reviews': {
        if (!pull) return notFound
        const visible = this.reviews.filter(
          (r) => r.pull === pull.number && (r.state !== 'PENDING' || r.user.login === user.login)
        )
        const perPage = Number(url.searchParams.get('per_page') ?? 30)
        const page = Number(url.searchParams.get('page') ?? 1)
        const slice = visible.slice((page - 1) * perPage, page * perPage)
        const headers: Record<string, string> = {}
        if (page * perPage < visible.length) {
          headers.link = `<${this.url}/repos/${this.owner}/${this.repo}/pulls/${pull.number}/reviews?per_page=${perPage}&page=${page + 1}>; rel="next"`
        }
        return [200, slice.map((r) => this.reviewJson(r)), headers]
      }
      case 'GET /pulls/{pull_number}/commits': {
        // The commits of the pull request (base..head), each with the accounts its author and
        // committer e-mail addresses are linked to (null when none is).
        if (!pull) return notFound
        if (pull.foreignHeadSha) return [200, []]
        const base = this.git(['rev-parse', `refs/heads/${pull.baseRef}`]).trim()
        const lines = this.git([
          'log',
          '--reverse',
          '--format=%H%x00%ae%x00%ce%x00%aI%x00%cI',
          `${base}..${this.headSha(pull)}`
        ])
          .split('\n')
          .filter((l) => l !== '')
        const account = (email: string): Record<string, unknown> | null => {
          const u = this.emails.get(email)
          return u ? this.userJson(u) : null
        }
        return [
          200,
          lines.map((l) => {
            const [sha, ae, ce, ad, cd] = l.split('\0')
            return {
              sha,
              node_id: `C_${sha}`,
              url: '',
              html_url: '',
              comments_url: '',
              parents: [],
              commit: {
                author: { name: 'Dev', email: ae, date: ad },
                committer: { name: 'Dev', email: ce, date: cd },
                message: '',
                url: '',
                comment_count: 0,
                tree: { sha: '', url: '' }
              },
              author: account(ae),
              committer: account(ce)
            }
          })
        ]
      }
      case 'GET /activity': {
        // Newest first, as GitHub lists it; `ref` may be a branch name or refs/heads/<name>.
        const full = `${p.owner}/${p.repo}`
        const ref = url.searchParams.get('ref')
        const wanted = ref === null ? null : ref.startsWith('refs/') ? ref : `refs/heads/${ref}`
        const list = this.activity
          .filter((a) => a.repository === full && (wanted === null || a.ref === wanted))
          .reverse()
        return [
          200,
          list.map((a) => ({
            id: a.id,
            node_id: `A_${a.id}`,
            before: a.before,
            after: a.after,
            ref: a.ref,
            timestamp: a.timestamp,
            activity_type: a.activity_type,
            actor: this.userJson(a.actor)
          }))
        ]
      }
      case 'POST /pulls/{pull_number}/reviews': {
        if (!pull) return notFound
        const event = b.event as string | undefined
        if (
          !event &&
          this.reviews.some(
            (r) => r.pull === pull.number && r.state === 'PENDING' && r.user.login === user.login
          )
        ) {
          return [
            422,
            {
              message: 'Unprocessable Entity',
              errors: ['User can only have one pending review per pull request']
            }
          ]
        }
        if ((event === 'COMMENT' || event === 'REQUEST_CHANGES') && !b.body) {
          return [422, { message: 'Unprocessable Entity', errors: ['Body is required'] }]
        }
        const commit = (b.commit_id as string | undefined) ?? this.headSha(pull)
        if (!this.commitExists(commit))
          return [
            422,
            {
              message: 'Unprocessable Entity',
              errors: ['commit_id is not part of the pull request']
            }
          ]
        const comments = (b.comments as ReviewLineComment[] | undefined) ?? []
        const files = this.pullFiles(pull)
        for (const c of comments) {
          // GitHub's rule: a comment's lines must be lines of the pull request's diff, on that side.
          const f = files.find((x) => x.filename === c.path)
          const lines = f?.patch !== undefined ? diffLines(String(f.patch)) : undefined
          const ok =
            lines !== undefined &&
            lines[c.side ?? 'RIGHT'].has(c.line) &&
            (c.start_line === undefined ||
              lines[c.start_side ?? c.side ?? 'RIGHT'].has(c.start_line))
          if (!ok)
            return [
              422,
              {
                message: 'Unprocessable Entity',
                errors: ['Pull request review thread line must be part of the diff']
              }
            ]
        }
        const review: Review = {
          id: this.nextId++,
          pull: pull.number,
          user,
          comments,
          body: (b.body as string | undefined) ?? '',
          state:
            event === undefined
              ? 'PENDING'
              : event === 'APPROVE'
                ? 'APPROVED'
                : event === 'COMMENT'
                  ? 'COMMENTED'
                  : 'CHANGES_REQUESTED',
          commit_id: commit,
          ...(event === undefined ? {} : { submitted_at: new Date().toISOString() })
        }
        this.reviews.push(review)
        return [200, this.reviewJson(review)]
      }
      case 'GET /pulls/{pull_number}/comments': {
        // The inline comments of the pull request's reviews (submitted ones), then the replies
        // in their threads, each with its review, path and line as GitHub lists them.
        if (!pull) return notFound
        const roots = this.reviews
          .filter((r) => r.pull === pull.number && r.state !== 'PENDING')
          .flatMap((r) =>
            (r.comments ?? []).map((c, i) => ({
              id: reviewCommentId(r.id, i),
              review: r.id,
              user: r.user,
              body: c.body,
              path: c.path,
              line: c.line,
              commit: r.commit_id,
              created_at: r.submitted_at ?? new Date().toISOString(),
              inReplyTo: undefined as number | undefined
            }))
          )
        const replies = this.reviewReplies
          .filter((x) => x.pull === pull.number)
          .map((x) => {
            const root = roots.find((r) => r.id === x.inReplyTo)
            return {
              id: x.id,
              review: x.id + 1,
              user: x.user,
              body: x.body,
              path: root?.path ?? '',
              line: root?.line ?? null,
              commit: root?.commit ?? '',
              created_at: x.created_at,
              inReplyTo: x.inReplyTo as number | undefined
            }
          })
        return [
          200,
          [...roots, ...replies].map((c) => ({
            url: '',
            pull_request_review_id: c.review,
            id: c.id,
            node_id: `PRRC_${c.id}`,
            diff_hunk: '',
            path: c.path,
            commit_id: c.commit,
            original_commit_id: c.commit,
            user: this.userJson(c.user),
            body: c.body,
            created_at: c.created_at,
            updated_at: c.created_at,
            html_url: `https://github.com/${this.owner}/${this.repo}/pull/${pull.number}#discussion_r${c.id}`,
            pull_request_url: '',
            // A person with a permission on the repository is one of its collaborators.
            author_association: this.permissions.has(c.user.login) ? 'COLLABORATOR' : 'NONE',
            _links: { self: { href: '' }, html: { href: '' }, pull_request: { href: '' } },
            line: c.line,
            original_line: c.line,
            side: 'RIGHT',
            ...(c.inReplyTo !== undefined ? { in_reply_to_id: c.inReplyTo } : {})
          }))
        ]
      }
      case 'GET /pulls/{pull_number}/files': {
        if (!pull) return notFound
        return [200, this.pullFiles(pull)]
      }
      case 'POST /pulls/{pull_number}/reviews/{review_id}/events': {
        const r = this.reviews.find((x) => x.id === Number(p.review_id) && x.pull === pull?.number)
        if (!r || r.user.login !== user.login) return notFound
        if (r.state !== 'PENDING')
          return [
            422,
            {
              message: 'Unprocessable Entity',
              errors: ['Can not submit a review that is not pending']
            }
          ]
        if (b.body !== undefined) r.body = String(b.body)
        r.submitted_at = new Date().toISOString()
        r.state =
          b.event === 'APPROVE'
            ? 'APPROVED'
            : b.event === 'COMMENT'
              ? 'COMMENTED'
              : 'CHANGES_REQUESTED'
        return [200, this.reviewJson(r)]
      }
      case 'PUT /pulls/{pull_number}/reviews/{review_id}': {
        const r = this.reviews.find((x) => x.id === Number(p.review_id) && x.pull === pull?.number)
        if (!r) return notFound
        if (r.user.login !== user.login)
          return [403, { message: 'You can only update your own reviews' }]
        r.body = String(b.body)
        return [200, this.reviewJson(r)]
      }
      case 'DELETE /pulls/{pull_number}/reviews/{review_id}': {
        const i = this.reviews.findIndex(
          (x) => x.id === Number(p.review_id) && x.pull === pull?.number
        )
        if (i < 0 || this.reviews[i].user.login !== user.login) return notFound
        if (this.reviews[i].state !== 'PENDING')
          return [422, { message: 'Unprocessable Entity', errors: ['Review is not pending'] }]
        const [r] = this.reviews.splice(i, 1)
        return [200, this.reviewJson(r)]
      }
      case 'GET /issues/{issue_number}/comments': {
        // The conversation of an issue or pull request, oldest first, as GitHub lists it.
        const issue = Number(p.issue_number)
        if (!this.pulls.has(issue)) return notFound
        const all = this.comments.filter((c) => c.issue === issue)
        const perPage = Number(url.searchParams.get('per_page') ?? 30)
        const page = Number(url.searchParams.get('page') ?? 1)
        const headers: Record<string, string> = {}
        if (page * perPage < all.length) {
          headers.link = `<${this.url}/repos/${this.owner}/${this.repo}/issues/${issue}/comments?per_page=${perPage}&page=${page + 1}>; rel="next"`
        }
        return [
          200,
          all.slice((page - 1) * perPage, page * perPage).map((c) => this.commentJson(c)),
          headers
        ]
      }
      case 'POST /issues/{issue_number}/comments': {
        const c: Comment = {
          id: this.nextId++,
          issue: Number(p.issue_number),
          user,
          body: String(b.body),
          created_at: new Date().toISOString()
        }
        this.comments.push(c)
        return [
          201,
          {
            id: c.id,
            body: c.body,
            user: this.userJson(user),
            html_url: `https://github.com/${this.owner}/${this.repo}/pull/${c.issue}#issuecomment-${c.id}`
          }
        ]
      }
      case 'POST /statuses/{sha}': {
        if (!this.commitExists(p.sha))
          return [422, { message: 'No commit found for SHA: ' + p.sha }]
        const desc = (b.description as string | undefined) ?? null
        if (desc !== null && desc.length > 140)
          return [422, { message: 'description is too long (maximum is 140 characters)' }]
        const s: Status = {
          id: this.nextId++,
          sha: p.sha,
          state: String(b.state),
          context: (b.context as string | undefined) ?? 'default',
          description: desc,
          target_url: (b.target_url as string | undefined) ?? null,
          creator: user,
          created_at: new Date().toISOString()
        }
        this.statuses.push(s)
        return [201, this.statusJson(s)]
      }
      case 'POST /check-runs': {
        const sha = String(b.head_sha)
        if (!this.commitExists(sha)) return [422, { message: 'No commit found for SHA: ' + sha }]
        const output = (b.output ?? {}) as { title?: string; summary?: string }
        const c: CheckRun = {
          id: this.nextId++,
          head_sha: sha,
          name: String(b.name),
          status: (b.status as string | undefined) ?? 'queued',
          conclusion: (b.conclusion as string | undefined) ?? null,
          details_url: (b.details_url as string | undefined) ?? null,
          started_at: (b.started_at as string | undefined) ?? null,
          completed_at: (b.completed_at as string | undefined) ?? null,
          output: { title: output.title ?? null, summary: output.summary ?? null },
          history: [],
          creator: user
        }
        if (c.conclusion !== null) c.status = 'completed'
        c.history.push({ status: c.status, summary: c.output.summary })
        this.checkRuns.push(c)
        return [201, this.checkRunJson(c)]
      }
      case 'PATCH /check-runs/{check_run_id}': {
        const c = this.checkRuns.find((r) => r.id === Number(p.check_run_id))
        if (c === undefined) return notFound
        if (typeof b.status === 'string') c.status = b.status
        if (typeof b.conclusion === 'string') {
          c.conclusion = b.conclusion
          c.status = 'completed'
        }
        if (typeof b.completed_at === 'string') c.completed_at = b.completed_at
        if (typeof b.details_url === 'string') c.details_url = b.details_url
        const output = b.output as { title?: string; summary?: string } | undefined
        if (output !== undefined)
          c.output = { title: output.title ?? null, summary: output.summary ?? null }
        c.history.push({ status: c.status, summary: c.output.summary })
        return [200, this.checkRunJson(c)]
      }
      case 'GET /actions/runs/{run_id}/jobs': {
        const jobs = this.workflowJobs.get(p.run_id)
        if (jobs === undefined) return notFound
        return [
          200,
          {
            total_count: jobs.length,
            jobs: jobs.map((j) => ({
              ...j,
              run_id: Number(p.run_id),
              html_url: `https://github.com/${this.owner}/${this.repo}/actions/runs/${p.run_id}/job/${j.id}`
            }))
          }
        ]
      }
      case 'GET /commits/{ref}/statuses': {
        const list = this.statuses.filter((s) => s.sha === p.ref).reverse()
        return [200, list.map((s) => this.statusJson(s))]
      }
      case 'GET /git/commits/{commit_sha}': {
        if (!this.commitExists(p.commit_sha)) return notFound
        const tree = this.git(['rev-parse', `${p.commit_sha}^{tree}`]).trim()
        return [
          200,
          {
            sha: p.commit_sha,
            tree: { sha: tree, url: '' },
            message: this.git(['log', '-1', '--format=%B', p.commit_sha]),
            parents: []
          }
        ]
      }
      case 'POST /git/blobs': {
        const content =
          b.encoding === 'base64'
            ? Buffer.from(String(b.content), 'base64')
            : Buffer.from(String(b.content), 'utf8')
        const sha = this.git(['hash-object', '-w', '--stdin'], content).trim()
        return [201, { sha, url: '' }]
      }
      case 'POST /git/trees': {
        const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'standin-idx-'))
        const idx = path.join(scratch, 'index')
        // update-index wants a work tree; an empty one is never read with --cacheinfo.
        const env = {
          ...process.env,
          GIT_DIR: this.gitDir,
          GIT_INDEX_FILE: idx,
          GIT_WORK_TREE: scratch
        }
        const run = (args: string[]): string => execFileSync('git', args, { env }).toString('utf8')
        if (b.base_tree) {
          try {
            run(['read-tree', String(b.base_tree)])
          } catch {
            return [422, { message: 'base_tree is not a valid tree' }]
          }
        } else run(['read-tree', '--empty'])
        for (const e of b.tree as {
          path: string
          mode: string
          type: string
          sha?: string | null
        }[]) {
          if (e.sha === null) {
            run(['update-index', '--force-remove', '--', e.path])
            continue
          }
          if (!e.sha || !this.objectExists(e.sha))
            return [422, { message: `tree.sha ${e.sha} is not a valid blob` }]
          run(['update-index', '--add', '--cacheinfo', `${e.mode},${e.sha},${e.path}`])
        }
        const sha = run(['write-tree']).trim()
        fs.rmSync(scratch, { recursive: true, force: true })
        return [201, { sha, url: '', tree: [], truncated: false }]
      }
      case 'POST /git/commits': {
        const args = [
          '-c',
          'user.name=GitHub',
          '-c',
          'user.email=noreply@github.com',
          'commit-tree',
          String(b.tree)
        ]
        for (const parent of (b.parents as string[] | undefined) ?? []) args.push('-p', parent)
        let sha: string
        try {
          sha = this.git([...args, '-F', '-'], String(b.message)).trim()
        } catch {
          return [422, { message: 'Tree SHA does not exist' }]
        }
        return [
          201,
          {
            sha,
            url: '',
            html_url: '',
            message: b.message,
            verification: { verified: true, reason: 'valid' }
          }
        ]
      }
      case 'PATCH /git/refs/{ref}': {
        const ref = `refs/${p.ref}`
        let current: string
        try {
          current = this.git(['rev-parse', '--verify', ref]).trim()
        } catch {
          return [422, { message: 'Reference does not exist' }]
        }
        const sha = String(b.sha)
        if (!this.commitExists(sha)) return [422, { message: 'Object does not exist' }]
        if (b.force !== true) {
          try {
            execFileSync('git', ['merge-base', '--is-ancestor', current, sha], {
              env: { ...process.env, GIT_DIR: this.gitDir }
            })
          } catch {
            return [422, { message: 'Update is not a fast forward' }]
          }
        }
        this.git(['update-ref', ref, sha])
        return [200, { ref, object: { sha, type: 'commit' } }]
      }
      case 'POST /git/refs': {
        const ref = String(b.ref)
        if (!/^refs\/heads\/./.test(ref)) return [422, { message: 'Reference name is invalid' }]
        try {
          this.git(['rev-parse', '--verify', ref])
          return [422, { message: 'Reference already exists' }]
        } catch {
          /* does not exist: create it */
        }
        this.git(['update-ref', ref, String(b.sha)])
        return [201, { ref, object: { sha: b.sha, type: 'commit' } }]
      }
      case 'GET /pulls': {
        const state = url.searchParams.get('state') ?? 'open'
        const list = [...this.pulls.values()]
          .filter((x) => state === 'all' || x.state === state)
          .sort((x, y) => y.number - x.number)
        const perPage = Number(url.searchParams.get('per_page') ?? 30)
        const page = Number(url.searchParams.get('page') ?? 1)
        const slice = list.slice((page - 1) * perPage, page * perPage)
        const headers: Record<string, string> = {}
        if (page * perPage < list.length) {
          headers.link = `<${this.url}/repos/${this.owner}/${this.repo}/pulls?state=${state}&per_page=${perPage}&page=${page + 1}>; rel="next"`
        }
        return [200, slice.map((x) => this.pullJson(x)), headers]
      }
      case 'POST /issues/comments/{comment_id}/reactions': {
        const content = String(b.content)
        this.reactions.push({ commentId: Number(p.comment_id), content, user: user.login })
        return [
          201,
          { id: this.nextId++, content, user: this.userJson(user), created_at: '', node_id: 'R' }
        ]
      }
      case 'POST /pulls': {
        const number = Math.max(0, ...this.pulls.keys()) + 1
        const pr: Pull = {
          number,
          user,
          headRef: String(b.head),
          baseRef: String(b.base),
          headRepo: `${this.owner}/${this.repo}`,
          state: 'open',
          draft: b.draft === true,
          title: String(b.title),
          body: String(b.body ?? '')
        }
        this.pulls.set(number, pr)
        return [201, this.pullJson(pr)]
      }
      default:
        this.violations.push(`stand-in does not implement ${method} ${template}`)
        return [501, { message: 'not implemented by the stand-in' }]
    }
  }

  commitExists(sha: string): boolean {
    // A fork's head commit is in GitHub's repository network, not in our local repository.
    if ([...this.pulls.values()].some((p) => p.foreignHeadSha === sha)) return true
    try {
      return this.git(['cat-file', '-t', sha]).trim() === 'commit'
    } catch {
      return false
    }
  }

  objectExists(sha: string): boolean {
    try {
      this.git(['cat-file', '-e', sha])
      return true
    } catch {
      return false
    }
  }

  userJson(u: User): Record<string, unknown> {
    return { login: u.login, id: u.id, type: u.type, node_id: `U_${u.id}` }
  }

  pullJson(p: Pull): Record<string, unknown> {
    const base = `https://github.com/${this.owner}/${this.repo}`
    return {
      number: p.number,
      state: p.state,
      draft: p.draft,
      title: p.title,
      body: p.body,
      user: this.userJson(p.user),
      html_url: `${base}/pull/${p.number}`,
      head: { ref: p.headRef, sha: this.headSha(p), repo: { full_name: p.headRepo } },
      base: {
        ref: p.baseRef,
        sha: this.git(['rev-parse', `refs/heads/${p.baseRef}`]).trim(),
        repo: { full_name: `${this.owner}/${this.repo}` }
      }
    }
  }

  /**
   * A comment written on issue or pull request `issue` by `user` now (as a person writes it on
   * GitHub, before the webhook fires): the test sends the event that names it.
   */
  addComment(issue: number, user: User, body: string): Comment {
    const c: Comment = {
      id: this.nextId++,
      issue,
      user,
      body,
      created_at: new Date().toISOString()
    }
    this.comments.push(c)
    return c
  }

  commentJson(c: Comment): Record<string, unknown> {
    const at = c.created_at ?? new Date(0).toISOString()
    return {
      id: c.id,
      node_id: `IC_${c.id}`,
      url: `${this.url}/repos/${this.owner}/${this.repo}/issues/comments/${c.id}`,
      html_url: `https://github.com/${this.owner}/${this.repo}/pull/${c.issue}#issuecomment-${c.id}`,
      issue_url: `${this.url}/repos/${this.owner}/${this.repo}/issues/${c.issue}`,
      body: c.body,
      user: this.userJson(c.user),
      created_at: at,
      updated_at: at,
      author_association: this.permissions.has(c.user.login) ? 'COLLABORATOR' : 'NONE'
    }
  }

  reviewJson(r: Review): Record<string, unknown> {
    return {
      id: r.id,
      node_id: `PRR_${r.id}`,
      user: this.userJson(r.user),
      body: r.body,
      state: r.state,
      commit_id: r.commit_id,
      ...(r.submitted_at !== undefined ? { submitted_at: r.submitted_at } : {}),
      html_url: `https://github.com/${this.owner}/${this.repo}/pull/${r.pull}#pullrequestreview-${r.id}`,
      pull_request_url: '',
      author_association: 'NONE',
      _links: { html: { href: '' }, pull_request: { href: '' } }
    }
  }

  statusJson(s: Status): Record<string, unknown> {
    return {
      id: s.id,
      state: s.state,
      context: s.context,
      description: s.description,
      target_url: s.target_url,
      creator: this.userJson(s.creator),
      created_at: s.created_at ?? new Date().toISOString()
    }
  }

  checkRunJson(c: CheckRun): Record<string, unknown> {
    return {
      id: c.id,
      head_sha: c.head_sha,
      name: c.name,
      status: c.status,
      conclusion: c.conclusion,
      details_url: c.details_url,
      started_at: c.started_at,
      completed_at: c.completed_at,
      output: c.output,
      html_url: `https://github.com/${this.owner}/${this.repo}/runs/${c.id}`
    }
  }
}

/** The lines of a file's patch that can carry a review comment, per side. */
function diffLines(patch: string): Record<'LEFT' | 'RIGHT', Set<number>> {
  const left = new Set<number>()
  const right = new Set<number>()
  let o = 0
  let n = 0
  for (const line of patch.split('\n')) {
    const h = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line)
    if (h) {
      o = Number(h[1])
      n = Number(h[2])
    } else if (line.startsWith('+')) right.add(n++)
    else if (line.startsWith('-')) left.add(o++)
    else if (!line.startsWith('\\')) {
      left.add(o++)
      right.add(n++)
    }
  }
  return { LEFT: left, RIGHT: right }
}

/** The id `GET /pulls/{n}/comments` gives the `index`-th inline comment of review `reviewId`. */
export function reviewCommentId(reviewId: number, index: number): number {
  return reviewId * 1000 + index
}
