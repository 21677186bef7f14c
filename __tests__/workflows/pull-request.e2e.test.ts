/**
 * The path a maintainer adopts, run as GitHub would run it: examples/pull-request.yml calls
 * .github/workflows/agent-run.yml (resolved and evaluated with GitHub's parser and evaluator), on
 * a real pull_request payload, with the runner's GITHUB_SHA the merge commit of refs/pull/7/merge.
 * The run job checks out and runs the built action with `agent: claude-code`: the real Claude
 * Code from npm, in the preset's image, through the egress proxy to a scripted stub of the
 * Messages API. The publish job downloads the evidence with the real artifact client and posts
 * to the OpenAPI-validating GitHub stand-in. Asserted: what GitHub would show.
 *
 * What this machine lacks and a hosted runner has (a registry and the internet) is given to the
 * action step only, and only where the workflow leaves the input empty: the local stand-in of
 * the pinned node base (build-args BASE), the local proxy image, and the model API's address
 * (the preset's route pointed at the stub, the stub's CA). Everything else is the files' own.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import YAML from 'yaml'
import { PEOPLE, PR_NUMBER, TOKEN, gitIn, webhook } from '../../__fixtures__/action-harness.js'
import type { World } from '../../__fixtures__/action-harness.js'
import { ACTIONS_BOT } from '../../__fixtures__/github-stand-in.js'
import type { User } from '../../__fixtures__/github-stand-in.js'
import {
  SECRET,
  approveRun as approveWith,
  gate as gateOf,
  jobLog as log,
  makePullRequestWorld,
  pullRequestPayload,
  pullRequestRun as runWith,
  remoteOf,
  runnerSetup as runnerOf,
  startModelStage,
  stopModelStage,
  updatePullRefs as refreshPullRefs,
  type ModelStage
} from '../../__fixtures__/preset-run.js'
import { runJob, type JobResult, type RunnerSetup } from '../../__fixtures__/workflow-run.js'
import {
  ROOT,
  githubContext,
  loadWorkflow,
  resolveCall,
  type Contexts,
  type ReadWorkflow
} from '../../__fixtures__/workflows.js'
import {
  freePort,
  startDockerRegistry,
  stopDockerRegistry
} from '../../scripts/docker-registry.mjs'
import { imageId, readTree } from '../egress/helpers.js'

let stage: ModelStage
beforeAll(async () => {
  // The model stub and one results service (and its Azurite) for the file, emptied after each test.
  stage = await startModelStage()
}, 300_000)
afterAll(async () => {
  await stopModelStage(stage)
}, 60_000)

/** examples/policy/airlock.yml for this repository (see beforeEach). */
function examplePolicy(): string {
  const doc = YAML.parseDocument(
    fs
      .readFileSync(path.join(ROOT, 'examples/policy/airlock.yml'), 'utf8')
      .replace('your-github-login', PEOPLE.writer.login)
  )
  for (const key of ['setup-command', 'setup-allow-hosts', 'services']) doc.delete(key)
  return doc.toString()
}

/**
 * examples/policy/airlock.yml with its database uncommented as a maintainer would: `isolation:
 * auto` as shipped and the commented `services:` block, the service's image replaced by `image` (a
 * digest in the test's registry) and its command by the one Debian's PostgreSQL package needs (the
 * example names the official image's entrypoint); without the install phase, whose `npm ci` would
 * need the outside npm registry.
 */
function examplePolicyWithDatabase(image: string): string {
  const doc = YAML.parseDocument(
    fs
      .readFileSync(path.join(ROOT, 'examples/policy/airlock.yml'), 'utf8')
      .replace('your-github-login', PEOPLE.writer.login)
  )
  for (const key of ['setup-command', 'setup-allow-hosts']) doc.delete(key)
  expect(doc.getIn(['isolation'])).toBe('auto')
  // The example's database, commented out there (a placeholder image would fail every run):
  // uncommented as a maintainer would, its image then pinned.
  const commented = /^# services:\n(?:# {2}.*\n)+/m.exec(
    fs.readFileSync(path.join(ROOT, 'examples/policy/airlock.yml'), 'utf8')
  )
  expect(commented).not.toBeNull()
  const services = YAML.parse(commented![0].replace(/^# ?/gm, '')) as { services: unknown }
  doc.set('services', doc.createNode(services.services))
  expect(doc.hasIn(['services', 'db', 'image'])).toBe(true)
  doc.setIn(['services', 'db', 'image'], image)
  doc.setIn(['services', 'db', 'user'], '101:104')
  doc.setIn(
    ['services', 'db', 'command'],
    "initdb -D /tmp/pg -U postgres --auth=trust >/dev/null && echo 'host all all all trust' >> /tmp/pg/pg_hba.conf && exec postgres -D /tmp/pg -c listen_addresses='*' -k /tmp"
  )
  return doc.toString()
}

/**
 * The repository's database test, in Node (the agent image has no psql): PostgreSQL's wire
 * protocol — startup as postgres (trust), one simple query, its one value printed.
 */
const DB_TEST = `import net from 'node:net'
const sql = process.argv[2]
const s = net.connect(5432, 'db')
const msg = (type, body) => {
  const len = Buffer.alloc(4); len.writeInt32BE(body.length + 4)
  return Buffer.concat([Buffer.from(type), len, body])
}
s.on('connect', () => {
  const params = Buffer.from('user\0postgres\0database\0postgres\0\0')
  const head = Buffer.alloc(8); head.writeInt32BE(params.length + 8); head.writeInt32BE(196608, 4)
  s.write(Buffer.concat([head, params]))
})
let buf = Buffer.alloc(0)
let sent = false
s.on('data', (d) => {
  buf = Buffer.concat([buf, d])
  while (buf.length >= 5) {
    const type = String.fromCharCode(buf[0]); const len = buf.readInt32BE(1)
    if (buf.length < len + 1) return
    const body = buf.subarray(5, len + 1); buf = buf.subarray(len + 1)
    if (type === 'E') { console.error('db error: ' + body.toString().replace(/\0/g, ' ')); process.exit(1) }
    if (type === 'Z' && !sent) { sent = true; s.write(msg('Q', Buffer.from(sql + '\0'))) }
    else if (type === 'D') { const n = body.readInt32BE(2); console.log('db answer: ' + body.subarray(6, 6 + n)) }
    else if (type === 'Z') { s.end(); process.exit(0) }
  }
})
s.on('error', (e) => { console.error('db unreachable: ' + e.message); process.exit(1) })
`

let world: World
let head: string
let base: string
let merge: string

beforeEach(async () => {
  const made = await makePullRequestWorld({
    'README.md': '# hello\n',
    // The example policy, on the base branch where the action reads it, naming an approver;
    // without its install phase and database, which this repository has no use for (no
    // package.json, no tests: `npm ci` and the example's placeholder image would fail anywhere).
    '.github/airlock.yml': examplePolicy(),
    '.github/airlock/review-task.md': 'Write a file GREETING.md that greets the reader.\n',
    // The shipped review task, with the line that makes the stub model play a reviewer.
    '.github/airlock/review-findings.md':
      fs.readFileSync(path.join(ROOT, 'examples/review-task.md'), 'utf8') +
      '\nstub-script: review\n',
    // An agent image of the repository's own, for a call that names no preset (busybox base).
    '.github/airlock/Dockerfile': `ARG BASE=busybox@sha256:${'0'.repeat(64)}\nFROM \${BASE}\nCOPY agent /bin/\n`,
    '.github/airlock/agent': { content: '#!/bin/sh\necho hello > GREETING.md\n', exec: true }
  })
  world = made.world
  ;({ head, base, merge } = made.refs)
})

/** GitHub's side after a push (see updatePullRefs in __fixtures__/preset-run.ts). */
function updatePullRefs(): void {
  ;({ head, base, merge } = refreshPullRefs(world))
}
afterEach(async () => {
  const violations = [...world.api.violations, ...stage.results.violations]
  stage.results.reset()
  await world.close()
  expect(violations).toEqual([])
})

const remote = (): string => remoteOf(world)
const payload = (fork: boolean): Record<string, unknown> =>
  pullRequestPayload({ head, base, merge }, fork)
const runnerSetup = (
  eventName: string,
  event: Record<string, unknown>,
  sha: string,
  ref: string
): RunnerSetup => runnerOf(stage, world, { eventName, payload: event, sha, ref })
/** examples/pull-request.yml on a pull_request event (its progress, run and publish jobs). */
const pullRequestRun = (opts: { fork?: boolean; read?: ReadWorkflow } = {}) =>
  runWith(stage, world, { head, base, merge }, opts)
/** examples/approve.yml on `/airlock approve` by `user`; the evidence is run `runId`'s artifact. */
const approveRun = (user: User, body: string, runId: string): Promise<JobResult> =>
  approveWith(stage, world, { user, body, runId, base })
const gate = (sha: string): string[] => gateOf(world, sha)

test('same-repository pull request, agent: claude-code → one review on the head, the gate pending', async () => {
  const before = (await stage.stubs.seen('upstream')).auth.length
  const { run, publish } = await pullRequestRun()
  expect([run.result, log(run)]).toEqual(['success', expect.any(String)])
  expect(run.outputs.outcome).toBe('success')
  expect(run.outputs['artifact-id']).toMatch(/^\d+$/)
  // The action got the head commit and the preset, and the key only as the proxy's credential.
  const action = run.steps.find(
    (s) => s.step.uses === './.airlock/action' && s.step.with.mode !== 'plan'
  )!
  expect(action.inputs).toMatchObject({ ref: head, agent: 'claude-code', env: '' })
  // The call names no tier; the base branch's policy file (isolation: auto) chooses gVisor for a
  // networked, credentialed run, so the pinned registration step runs first (here the daemon has
  // both entries already and it changes nothing; a hosted runner gets them registered).
  const plan = run.steps.find((s) => s.step.with?.mode === 'plan')!
  expect([plan.code, plan.stdout]).toEqual([0, expect.stringContaining('isolation tier: runsc')])
  const gvisor = run.steps.find((s) => s.step.run?.includes('register-gvisor.sh'))!
  expect([gvisor.skipped, gvisor.code]).toEqual([false, 0])
  expect(gvisor.stderr).toMatch(/already has the gVisor runtimes/)
  expect(action.environment.AIRLOCK_AGENT_API_KEY).toBe(SECRET)
  expect((await stage.stubs.seen('upstream')).auth.slice(before)).toContain(`x-api-key: ${SECRET}`)

  expect([publish.result, log(publish)]).toEqual(['success', expect.any(String)])
  const evidence = path.join(publish.workspace, 'airlock-out')
  const report = JSON.parse(fs.readFileSync(path.join(evidence, 'report.json'), 'utf8')) as {
    repo: { headSha: string }
    agent: { preset?: string }
    diff: { files: { path: string }[] }
    egress: { transcript?: { tokens: { input: number } } }
  }
  expect(report.repo.headSha).toBe(head)
  expect(report.agent.preset).toBe('claude-code')
  expect(report.diff.files.map((f) => f.path)).toEqual(['GREETING.md'])
  expect(report.egress.transcript?.tokens.input).toBeGreaterThan(0)
  for (const f of readTree(evidence))
    expect([f.file, f.text.includes(SECRET)]).toEqual([f.file, false])

  // What GitHub shows: one review by the workflow's identity on the head, the gate pending.
  const reviews = world.api.reviews.filter((r) => r.user.login === ACTIONS_BOT.login)
  expect(reviews.map((r) => r.commit_id)).toEqual([head])
  expect(reviews[0].body).toContain('GREETING.md')
  expect(world.api.statuses).toEqual([
    expect.objectContaining({ sha: head, state: 'pending', context: 'airlock/approval' })
  ])
}, 600_000)

test('a review task: the CLI runs the tests, the review carries the answer, the task, the next step, one inline suggestion and the other finding in its body', async () => {
  const read: ReadWorkflow = (f) => {
    const text = fs.readFileSync(path.join(ROOT, f), 'utf8')
    return f === 'examples/pull-request.yml'
      ? text.replace(
          'task: .github/airlock/review-task.md',
          'task: .github/airlock/review-findings.md'
        )
      : text
  }
  const { run, publish } = await pullRequestRun({ read })
  expect([run.result, log(run)]).toEqual(['success', expect.any(String)])
  // Claude Code ran the tests through its shell tool (the preset lets it run commands).
  const out = path.join(run.workspace, 'airlock-out')
  expect(fs.readFileSync(path.join(out, 'logs', 'agent.log'), 'utf8')).toMatch(
    /airlock-stub: tests exit \d+/
  )
  expect(fs.readFileSync(path.join(out, 'agent-message.md'), 'utf8')).toContain(
    'Reviewed the pull request and ran the tests'
  )
  expect([publish.result, log(publish)]).toEqual(['success', expect.any(String)])
  const report = JSON.parse(
    fs.readFileSync(path.join(publish.workspace, 'airlock-out', 'report.json'), 'utf8')
  ) as {
    agent: { message?: { source: string; text: string } }
    findings?: { findings: unknown[] }
    task: { text?: string }
  }
  expect(report.agent.message).toMatchObject({ source: 'summary.md' })
  expect(report.findings?.findings).toHaveLength(2)

  const reviews = world.api.reviews.filter((r) => r.user.login === ACTIONS_BOT.login)
  expect(reviews.map((r) => r.commit_id)).toEqual([head])
  const [review] = reviews
  // One inline comment, on the pull request's line, with the suggestion.
  expect(review.comments).toEqual([
    expect.objectContaining({ path: 'feature.txt', line: 1, side: 'RIGHT' })
  ])
  expect(review.comments?.[0].body).toContain('```suggestion\nfrom the pull request, reviewed\n')
  expect(review.comments?.[0].body).toContain('Say where the text comes from.')
  // The body: the task, the next step, the agent's words, and the finding that has no line here.
  const body = review.body
  expect(body).toContain('**Task** (as given to the agent)')
  expect(body).toContain('> Review this pull request and fix what you find.')
  expect(body).toMatch(
    /\*\*Next step:\*\* the agent changed nothing; to pass the gate, a maintainer comments `\/airlock approve [0-9a-f]{12}`/
  )
  expect(body).toContain("### The agent's answer")
  expect(body).toContain('> Reviewed the pull request and ran the tests: they pass.')
  expect(body).toContain('1 finding(s) are on the lines')
  expect(body).toMatch(/<code>README\.md<\/code> line 1 — the file is not part of the pull request/)
  expect(body).toContain('> The README does not mention the feature.')
}, 600_000)

test('a writer approves with /airlock approve → success; a new push → a new run, pending again', async () => {
  const first = await pullRequestRun()
  expect([first.publish.result, log(first.publish)]).toEqual(['success', expect.any(String)])
  const diff = first.run.outputs['diff-sha256']
  expect(diff).toMatch(/^[0-9a-f]{64}$/)
  const approval = await approveRun(
    PEOPLE.writer,
    `/airlock approve ${diff.slice(0, 12)}`,
    first.runId
  )
  expect([approval.result, log(approval)]).toEqual(['success', expect.any(String)])
  const approved = head
  expect(gate(approved)).toEqual(['pending', 'success'])

  world.api.push('feature', 'the author pushes again')
  updatePullRefs()
  expect(head).not.toBe(approved)
  const second = await pullRequestRun()
  expect([second.publish.result, log(second.publish)]).toEqual(['success', expect.any(String)])
  expect(gate(head)).toEqual(['pending'])
  expect(gate(approved)).toEqual(['pending', 'success'])
  const reviews = world.api.reviews.filter((r) => r.user.login === ACTIONS_BOT.login)
  expect(reviews.map((r) => r.commit_id)).toContain(head)
}, 900_000)

test('manual-task.yml: after the apply environment, a branch and a draft PR on the approved head', async () => {
  // GitHub's default refuses the workflow token a pull request (apply.e2e shows the refusal).
  world.api.settings.actionsCanCreatePullRequests = true
  const task = 'Write a file GREETING.md that greets the reader.'
  const event = webhook('workflow_dispatch', undefined, (p) => {
    p.ref = 'refs/heads/main'
    p.inputs = { task }
  })
  const runId = String(100000 + Math.floor(Math.random() * 899999))
  const ctx: Contexts = {
    github: githubContext('workflow_dispatch', event, {
      sha: base,
      ref: 'refs/heads/main',
      token: TOKEN,
      runId
    }),
    inputs: { task },
    secrets: { ANTHROPIC_API_KEY: SECRET }
  }
  const call = await resolveCall(await loadWorkflow('examples/manual-task.yml'), 'airlock', ctx)
  const inner: Contexts = { ...ctx, inputs: call.inputs, secrets: call.secrets }
  const setup = runnerSetup('workflow_dispatch', event, base, 'refs/heads/main')
  const run = await runJob(call.callee, 'run', inner, setup)
  expect([run.result, log(run)]).toEqual(['success', expect.any(String)])
  const publish = await runJob(
    call.callee,
    'publish',
    { ...inner, needs: { run: { result: run.result, outputs: run.outputs } } },
    setup
  )
  expect(publish.ran).toBe(false)
  const needs = {
    run: { result: run.result, outputs: run.outputs },
    publish: { result: 'skipped', outputs: {} }
  }
  const apply = await runJob(call.callee, 'apply', { ...inner, needs }, setup)
  // The job waits for the environment's reviewers; here they approved.
  expect(apply.environment).toBe('airlock-apply')
  expect([apply.result, log(apply)]).toEqual(['success', expect.any(String)])
  const branch = `airlock/${runId}-1`
  const commit = world.api.git(['rev-parse', `refs/heads/${branch}`]).trim()
  expect(world.api.git(['rev-parse', `${commit}^`]).trim()).toBe(base)
  expect(world.api.git(['show', `${commit}:GREETING.md`])).toBe('Hello from the stub model.\n')
  const pr = [...world.api.pulls.values()].find((p) => p.headRef === branch)
  expect(pr).toMatchObject({ baseRef: 'main', draft: true })
}, 900_000)

test('fork pull request → no secret in the run job, a clear failure, nothing published', async () => {
  const { run, publish } = await pullRequestRun({ fork: true })
  for (const s of run.steps) {
    const seen = Object.entries({ ...s.environment, ...s.inputs }).filter(([, v]) =>
      v.includes(SECRET)
    )
    expect([s.step.index, seen]).toEqual([s.step.index, []])
  }
  expect(run.result).toBe('failure')
  expect(log(run)).toMatch(
    /::error title=Agent Airlock%3A configuration::agent: this pull request comes from a fork/
  )
  expect(publish.ran).toBe(false)
  expect(world.api.writes()).toEqual([])
}, 300_000)

test('dry-run: true → the agent runs, nothing is written to GitHub', async () => {
  const read: ReadWorkflow = (f) => {
    const text = fs.readFileSync(path.join(ROOT, f), 'utf8')
    return f === 'examples/pull-request.yml'
      ? text.replace(
          '      agent: claude-code\n',
          '      agent: claude-code\n      dry-run: true\n'
        )
      : text
  }
  const { run, publish } = await pullRequestRun({ read })
  expect([run.result, log(run)]).toEqual(['success', expect.any(String)])
  expect(run.outputs.outcome).toBe('success')
  expect(publish.ran).toBe(false)
  expect(world.api.writes()).toEqual([])
  expect(stage.results.artifacts()).toEqual([])
}, 600_000)

/**
 * The reusable workflow called from a pull_request caller with these extra `with:` lines (besides
 * the Dockerfile, command and task of the test repository, without publishing): its run job.
 */
let released = ''
/**
 * agent-run.yml's run job as a caller with `extra` inputs calls it: by the release tag with no
 * airlock-repository/airlock-ref (`tag`: the workflow checks out its own repository and commit,
 * job.workflow_repository and job.workflow_sha), or pinned by a full SHA with airlock-ref given
 * (`airlockRef`: as a caller on GitHub Enterprise Server, which has no job.workflow_* context).
 */
async function runCalledJob(extra: string[], pin: { airlockRef?: string } = {}) {
  const event = payload(false)
  const ctx: Contexts = {
    github: githubContext('pull_request', event, {
      sha: merge,
      ref: `refs/pull/${PR_NUMBER}/merge`,
      token: TOKEN
    })
  }
  const caller = [
    'on: pull_request',
    'permissions: {}',
    'jobs:',
    '  airlock:',
    pin.airlockRef === undefined
      ? '    uses: OWNER/agent-airlock/.github/workflows/agent-run.yml@v1'
      : `    uses: OWNER/agent-airlock/.github/workflows/agent-run.yml@${'0'.repeat(40)}`,
    '    permissions: { contents: read, pull-requests: write, statuses: write, checks: write, actions: read }',
    '    with:',
    ...(pin.airlockRef === undefined
      ? []
      : [
          '      airlock-repository: OWNER/agent-airlock',
          `      airlock-ref: '${pin.airlockRef}'`
        ]),
    '      dockerfile: .github/airlock/Dockerfile',
    '      agent-command: agent',
    '      task: .github/airlock/review-task.md',
    ...extra.map((line) => `      ${line}`),
    '      publish: false',
    ''
  ].join('\n')
  const read: ReadWorkflow = (f) =>
    f === 'caller.yml' ? caller : fs.readFileSync(path.join(ROOT, f), 'utf8')
  // The commit the tag stands for here (this checkout's), as the call resolves it.
  released = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT }).toString().trim()
  const call = await resolveCall(await loadWorkflow('caller.yml', read), 'airlock', ctx, read)
  const busybox = imageId('airlock-local/busybox:1')
  const setup: RunnerSetup = {
    ...runnerSetup('pull_request', event, merge, `refs/pull/${PR_NUMBER}/merge`),
    // A hosted runner pulls the pinned base; here it is the local image.
    machineInputs: (step): Record<string, string> =>
      step.with.mode === 'run' || step.with.mode === 'plan'
        ? { 'build-args': `BASE=${busybox}`, memory: '256m', cpus: '1' }
        : {}
  }
  return runJob(call.callee, 'run', { ...ctx, inputs: call.inputs, secrets: call.secrets }, setup)
}

test('a call with setup-command, isolation: runsc and dependency-cache: off → the pinned gVisor step, then the action with those inputs', async () => {
  // The registration step runs for real below: only on a daemon that already has both entries,
  // where it reads `docker info` and changes nothing (it never reconfigures this machine's daemon).
  expect(spawnSync('bash', [path.join(ROOT, 'scripts/register-gvisor.sh'), '--check']).status).toBe(
    0
  )
  const run = await runCalledJob([
    'setup-command: mkdir -p vendor && echo installed > vendor/marker',
    'isolation: runsc',
    "dependency-cache: 'off'"
  ])
  expect([run.result, log(run)]).toEqual(['success', expect.any(String)])
  // Agent Airlock was checked out from the called workflow's own repository and the commit the
  // tag resolved to, with no value in the caller.
  const own = run.steps.find((x) => x.step.with?.path === '.airlock/action')!
  expect([own.step.with.repository, own.step.with.ref]).toEqual(['OWNER/agent-airlock', released])

  // The registration ran the script of the Agent Airlock checkout, never a file of the pull request.
  const gvisor = run.steps.find((s) => s.step.run?.includes('register-gvisor.sh'))!
  expect(gvisor.skipped).toBe(false)
  expect(gvisor.step.run?.trim()).toBe('bash .airlock/action/scripts/register-gvisor.sh')
  expect([gvisor.code, gvisor.stderr]).toEqual([
    0,
    expect.stringMatching(/already has the gVisor runtimes/)
  ])
  expect(
    fs.existsSync(path.join(run.workspace, '.airlock/action/scripts/register-gvisor.sh'))
  ).toBe(true)

  // What reached the action, and what it did with it.
  const action = run.steps.find(
    (s) => s.step.uses === './.airlock/action' && s.step.with.mode !== 'plan'
  )!
  expect(action.inputs).toMatchObject({
    'setup-command': 'mkdir -p vendor && echo installed > vendor/marker',
    isolation: 'runsc',
    'dependency-cache': 'off'
  })
  const report = JSON.parse(
    fs.readFileSync(path.join(run.workspace, 'airlock-out', 'report.json'), 'utf8')
  ) as {
    outcome: string
    setup?: { command: string; phase: { exitCode: number | null }; cache?: unknown }
    isolation?: { requested: string; tier: string; runtime: string }
  }
  expect(report.outcome).toBe('success')
  expect(report.setup).toMatchObject({
    command: 'mkdir -p vendor && echo installed > vendor/marker',
    phase: { exitCode: 0 }
  })
  expect(report.setup?.cache).toBeUndefined()
  expect(report.isolation).toMatchObject({ requested: 'runsc', tier: 'runsc', runtime: 'runsc' })
}, 180_000)

test('the example policy (isolation: auto) with its PostgreSQL service, pulled by digest during the run from a registry; the tests talk to it', async () => {
  // A registry on loopback holds the database image; the engine has no image by that reference
  // before the run, as on a fresh runner.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-workflow-registry-'))
  const port = await freePort()
  const registry = await startDockerRegistry(dir, port)
  let pinned = ''
  const present = (): boolean =>
    spawnSync('docker', ['image', 'inspect', pinned], { stdio: 'ignore' }).status === 0
  try {
    const repo = `localhost:${port}/octo-org/postgres-${process.pid}`
    execFileSync('docker', ['tag', 'airlock-local/postgres:15', `${repo}:15`])
    execFileSync('docker', ['push', '-q', `${repo}:15`])
    pinned = execFileSync('docker', [
      'image',
      'inspect',
      '-f',
      '{{range .RepoDigests}}{{println .}}{{end}}',
      `${repo}:15`
    ])
      .toString()
      .split('\n')
      .find((d) => d.startsWith(repo))!
    expect(pinned).toMatch(/@sha256:[a-f0-9]{64}$/)
    execFileSync('docker', ['rmi', `${repo}:15`])
    if (present()) execFileSync('docker', ['rmi', pinned])
    expect(present()).toBe(false)

    // The base branch gets the example policy with the database, and the repository its test.
    const ws = world.workspace
    gitIn(ws, ['checkout', '-q', 'main'])
    fs.writeFileSync(path.join(ws, '.github/airlock.yml'), examplePolicyWithDatabase(pinned))
    fs.writeFileSync(path.join(ws, 'db-test.mjs'), DB_TEST)
    gitIn(ws, ['add', '.github/airlock.yml', 'db-test.mjs'])
    gitIn(ws, ['commit', '-q', '-m', 'a database for the tests'])
    gitIn(ws, ['push', '-q', remote(), 'main'])
    gitIn(ws, ['checkout', '-q', 'feature'])
    gitIn(ws, ['merge', '-q', '--no-edit', 'main'])
    gitIn(ws, ['push', '-q', remote(), 'feature'])
    updatePullRefs()

    // The policy has no test command: the call names it (an input wins over the policy file).
    const read: ReadWorkflow = (f) => {
      const text = fs.readFileSync(path.join(ROOT, f), 'utf8')
      return f === 'examples/pull-request.yml'
        ? text.replace(
            '      agent: claude-code\n',
            `      agent: claude-code\n      test-command: node db-test.mjs "SELECT 'hello from ' || current_database()"\n`
          )
        : text
    }
    const { run, publish } = await pullRequestRun({ read })
    expect([run.result, log(run)]).toEqual(['success', expect.any(String)])
    expect(run.outputs.outcome).toBe('success')
    const out = path.join(run.workspace, 'airlock-out')
    const report = JSON.parse(fs.readFileSync(path.join(out, 'report.json'), 'utf8')) as {
      isolation?: { requested: string; tier: string; runtime: string }
      services?: { name: string; phase: string; image: string; imageId: string; healthy: boolean }[]
      tests: { phase: { exitCode: number | null } | null }
    }
    // auto chose gVisor for this networked, credentialed run; the pinned registration step ran.
    expect(report.isolation).toMatchObject({ requested: 'auto', tier: 'runsc' })
    const gvisor = run.steps.find((s) => s.step.run?.includes('register-gvisor.sh'))!
    expect([gvisor.skipped, gvisor.code]).toEqual([false, 0])
    // The database image was pulled by its digest during the run, and served the tests.
    expect(present()).toBe(true)
    expect(report.services).toEqual([
      expect.objectContaining({
        name: 'db',
        phase: 'tests',
        image: pinned,
        imageId: imageId('airlock-local/postgres:15'),
        healthy: true
      })
    ])
    expect(report.tests.phase?.exitCode).toBe(0)
    expect(fs.readFileSync(path.join(out, 'logs', 'tests.log'), 'utf8')).toContain(
      'db answer: hello from postgres'
    )
    expect([publish.result, log(publish)]).toEqual(['success', expect.any(String)])
  } finally {
    if (pinned !== '') spawnSync('docker', ['rmi', pinned], { stdio: 'ignore' })
    await stopDockerRegistry(registry)
    fs.rmSync(dir, { recursive: true, force: true })
  }
}, 600_000)

test('the policy (isolation: auto) chooses runc for a run without network, credentials or install phase → the plan step says so and the gVisor step is skipped', async () => {
  const run = await runCalledJob([], { airlockRef: 'a'.repeat(40) })
  expect([run.result, log(run)]).toEqual(['success', expect.any(String)])
  // The caller's airlock-ref wins over the job context.
  const own = run.steps.find((x) => x.step.with?.path === '.airlock/action')!
  expect(own.step.with.ref).toBe('a'.repeat(40))
  const plan = run.steps.find((s) => s.step.with?.mode === 'plan')!
  expect([plan.code, plan.stdout]).toEqual([0, expect.stringContaining('isolation tier: runc')])
  const gvisor = run.steps.find((s) => s.step.run?.includes('register-gvisor.sh'))!
  expect(gvisor.skipped).toBe(true)
  const report = JSON.parse(
    fs.readFileSync(path.join(run.workspace, 'airlock-out', 'report.json'), 'utf8')
  ) as { outcome: string; isolation?: { requested: string; tier: string } }
  expect(report.outcome).toBe('success')
  expect(report.isolation).toMatchObject({ requested: 'auto', tier: 'runc' })
}, 180_000)
