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
 *
 * This file holds the state, the HTTP handling (validation, tokens, permissions, faults) and the
 * JSON shapes; the routes are in `stand-in/`, one module per API area (repository, pulls,
 * reviews and comments, statuses and checks, git data, actions).
 */
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as http from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import { Ajv } from 'ajv'
import type { ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { actionsRoutes } from './stand-in/actions.js'
import { gitDataRoutes } from './stand-in/git-data.js'
import { releasesRoutes, type Release } from './stand-in/releases.js'
import { pullsRoutes } from './stand-in/pulls.js'
import { repositoryRoutes } from './stand-in/repository.js'
import { reviewsRoutes } from './stand-in/reviews.js'
import type { Answer, Routes } from './stand-in/routes.js'
import type {
  Activity,
  CheckRun,
  Comment,
  Fault,
  Pull,
  RecordedRequest,
  RepositoryEvent,
  Review,
  Status,
  User,
  WorkflowJob
} from './stand-in/state.js'
import { ACTIONS_BOT } from './stand-in/state.js'
import { startsWorkflows } from './github-rules.js'
import { statusesRoutes } from './stand-in/statuses.js'

export * from './stand-in/state.js'
export { reviewCommentId } from './stand-in/reviews.js'

/** Every route the stand-in answers, by API area. */
const ROUTES: Routes = {
  ...repositoryRoutes,
  ...pullsRoutes,
  ...reviewsRoutes,
  ...statusesRoutes,
  ...gitDataRoutes,
  ...releasesRoutes,
  ...actionsRoutes
}

const require = createRequire(import.meta.url)

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = Record<string, any>

/** The running stand-ins by their address (see GitHubStandIn.at). */
const RUNNING = new Map<string, GitHubStandIn>()

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
  if (/^\/(git|contents|commits|releases)\b/.test(t)) return ['contents']
  return undefined
}

// ---- state ---------------------------------------------------------------------------------

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
  readonly releases: Release[] = []
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
  /**
   * Repository settings GitHub enforces. `actionsCanCreatePullRequests`: "Allow GitHub Actions to
   * create and approve pull requests" (Settings → Actions → General), off by default: without it
   * `POST /pulls` with GITHUB_TOKEN is 403.
   */
  readonly settings = { actionsCanCreatePullRequests: false }
  /**
   * Branch protection of the default branch: the status contexts that must be `success` on a pull
   * request's head before it can merge (`mergeState`). A context never reported blocks for good.
   */
  readonly requiredContexts: string[] = []
  /**
   * The webhook events the writes caused, in order, with whether GitHub starts workflows for
   * them: an event caused by GITHUB_TOKEN starts none, except workflow_dispatch and
   * repository_dispatch (`startsWorkflows`).
   */
  readonly events: RepositoryEvent[] = []
  /** Answer GraphQL with an error (the viewer cannot be read). */
  graphqlFails = false
  /** Called before a request is handled (after validation): lets a test change the world mid-run. */
  beforeRoute?: (route: string) => void
  /** Hold the first N matching requests until N have arrived (to force a race). */
  barrier?: { method: string; route: string; count: number; waiting: (() => void)[] }
  private server?: http.Server
  /** The next id a created object gets. */
  nextId = 1000
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
      reactions: this.reactions,
      settings: this.settings,
      requiredContexts: this.requiredContexts,
      events: this.events
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
      Object.assign(this.settings, structuredClone(saved.settings))
      refill(this.requiredContexts, saved.requiredContexts)
      refill(this.events, saved.events)
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
  ): Answer {
    const key = `${method} ${template.replace('/repos/{owner}/{repo}', '')}`
    const handler = ROUTES[key]
    if (handler === undefined) {
      this.violations.push(`stand-in does not implement ${method} ${template}`)
      return [501, { message: 'not implemented by the stand-in' }]
    }
    const pull = p.pull_number !== undefined ? this.pulls.get(Number(p.pull_number)) : undefined
    return handler(this, { p, b: (body ?? {}) as Record<string, unknown>, user, url, pull })
  }

  /** Records the webhook event a write caused (see `events`). */
  emit(name: string, action: string | undefined, actor: User, pull?: number): void {
    const byWorkflowToken = actor.login === ACTIONS_BOT.login
    this.events.push({
      name,
      ...(action !== undefined ? { action } : {}),
      actor: actor.login,
      ...(pull !== undefined ? { pull } : {}),
      byWorkflowToken,
      startsWorkflows: startsWorkflows(name, byWorkflowToken)
    })
  }

  /**
   * Whether the pull request can merge under branch protection, as its `mergeable_state` says:
   * `blocked` while a required context has no `success` status on the head (never reported,
   * pending or failed), `clean` otherwise.
   */
  mergeState(pull: Pull): 'clean' | 'blocked' {
    const head = this.headSha(pull)
    for (const context of this.requiredContexts) {
      const latest = this.statuses.filter((s) => s.sha === head && s.context === context).at(-1)
      if (latest?.state !== 'success') return 'blocked'
    }
    return 'clean'
  }

  branchExists(name: string): boolean {
    try {
      this.git(['rev-parse', '--verify', `refs/heads/${name}`])
      return true
    } catch {
      return false
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
      mergeable_state: p.state === 'open' ? this.mergeState(p) : 'unknown',
      head: { ref: p.headRef, sha: this.headSha(p), repo: { full_name: p.headRepo } },
      base: {
        ref: p.baseRef,
        sha: this.git(['rev-parse', `refs/heads/${p.baseRef}`]).trim(),
        repo: { full_name: `${this.owner}/${this.repo}` }
      }
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
