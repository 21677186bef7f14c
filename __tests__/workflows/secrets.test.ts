/**
 * Where a secret can go, decided by evaluating the workflow files as GitHub does (GitHub's parser
 * and expression evaluator, contexts from real webhook payloads): a value from `secrets.*` never
 * reaches the sandbox (no `env` input names a variable a step sets from a secret), and on a
 * fork's pull request the job that runs the pull request's code sees no secret at all.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import {
  ROOT,
  githubContext,
  jobSteps,
  jobRuns,
  loadWorkflow,
  resolveCall,
  type Contexts,
  type LoadedWorkflow,
  type ReadWorkflow
} from '../../__fixtures__/workflows.js'

const require = createRequire(import.meta.url)
const examples = require('@octokit/webhooks-examples/api.github.com/index.json') as {
  name: string
  examples: Record<string, any>[] // eslint-disable-line @typescript-eslint/no-explicit-any
}[]

const SECRET = 'sekrit-0123456789abcdef'
const FILES = [
  ...fs.readdirSync(path.join(ROOT, '.github/workflows')).map((f) => `.github/workflows/${f}`),
  ...fs.readdirSync(path.join(ROOT, 'examples')).map((f) => `examples/${f}`)
].filter((f) => /\.ya?ml$/.test(f))

/** A real pull_request payload, from the same repository or from a fork. */
function pullRequest(fork: boolean): Record<string, unknown> {
  const p = structuredClone(
    examples
      .find((g) => g.name === 'pull_request')!
      .examples.find((e) => e.action === 'synchronize')!
  )
  p.repository.full_name = 'octo-org/hello'
  p.pull_request.base.repo.full_name = 'octo-org/hello'
  p.pull_request.head.repo.full_name = fork ? 'mallory/hello' : 'octo-org/hello'
  p.pull_request.head.sha = 'a'.repeat(40)
  return p
}

function contexts(fork: boolean): Contexts {
  return {
    github: githubContext('pull_request', pullRequest(fork), {
      sha: 'b'.repeat(40),
      ref: 'refs/pull/7/merge'
    }),
    // As if the repository had them all (GitHub withholds them from forks; the workflow must too).
    secrets: { ANTHROPIC_API_KEY: SECRET, OPENAI_API_KEY: SECRET, GITHUB_TOKEN: 'ghs_x' }
  }
}

const list = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter((s) => s !== '')

const isAirlock = (uses: string | undefined): boolean =>
  uses !== undefined && (uses === './.airlock/action' || /\/agent-airlock@[0-9a-f]{40}$/.test(uses))

/** The jobs (of the workflow, or of the workflow it calls) with their evaluated steps. */
async function runJobs(
  w: LoadedWorkflow,
  ctx: Contexts,
  read?: ReadWorkflow
): Promise<
  { where: string; runs: boolean; steps: ReturnType<typeof jobSteps>; rawEnvSecrets: string[] }[]
> {
  const out = []
  for (const job of w.template.jobs) {
    const id = job.id.value as string
    if (job.type === 'reusableWorkflowJob') {
      const call = await resolveCall(w, id, ctx, read)
      const inner: Contexts = { ...ctx, inputs: call.inputs, secrets: call.secrets }
      out.push(
        ...(await runJobs(call.callee, inner, read)).map((j) => ({
          ...j,
          where: `${w.file}:${id} → ${j.where}`
        }))
      )
      continue
    }
    // Variables a step sets from a secret, read from the text (whatever the condition).
    const steps = jobSteps(w, id, ctx)
    const rawEnvSecrets = secretVariables(w, id)
    out.push({ where: `${w.file}:${id}`, runs: jobRuns(w, id, ctx), steps, rawEnvSecrets })
  }
  return out
}

/** Names of the variables that a step of the job sets from an expression naming `secrets.`. */
function secretVariables(w: LoadedWorkflow, jobId: string): string[] {
  /* eslint-disable @typescript-eslint/no-explicit-any */
  const get = (t: any, k: string): any => t?.map?.find((p: any) => p.key.value === k)?.value
  const job = get(get(w.raw, 'jobs'), jobId)
  const names: string[] = []
  for (const env of [
    get(job, 'env'),
    ...(get(job, 'steps')?.seq ?? []).map((s: any) => get(s, 'env'))
  ]) {
    for (const p of env?.map ?? []) {
      if (typeof p.value.expression === 'string' && /\bsecrets\./.test(p.value.expression))
        names.push(p.key.value)
    }
  }
  /* eslint-enable @typescript-eslint/no-explicit-any */
  return names
}

/** Every way a secret reaches the sandbox or a fork's run job, as readable strings. */
async function leaks(file: string, read?: ReadWorkflow): Promise<string[]> {
  const w = await loadWorkflow(file, read)
  const out: string[] = []
  for (const fork of [false, true]) {
    const ctx = contexts(fork)
    for (const job of await runJobs(w, ctx, read)) {
      for (const step of job.steps) {
        if (!isAirlock(step.uses)) continue
        const named = list(step.with.env).filter((n) => job.rawEnvSecrets.includes(n))
        if (named.length > 0) {
          out.push(
            `${job.where} step ${step.index}: env passes ${named.join(', ')} (set from a secret) into the sandbox`
          )
        }
        if (fork && job.runs && step.runs && (step.with.mode ?? 'run') === 'run') {
          const seen = Object.entries({ ...step.env, ...step.with }).filter(([, v]) =>
            v.includes(SECRET)
          )
          for (const [k] of seen)
            out.push(
              `${job.where} step ${step.index}: ${k} holds a secret on a fork's pull request`
            )
        }
      }
    }
  }
  return out
}

test.each(FILES)('%s: no secret reaches the sandbox or a fork run', async (file) => {
  expect(await leaks(file)).toEqual([])
})

describe('the rules catch', () => {
  const changed =
    (file: string, from: string, to: string): ReadWorkflow =>
    (f) => {
      const text = fs.readFileSync(path.join(ROOT, f), 'utf8')
      if (f !== file) return text
      expect(text).toContain(from)
      return text.replace(from, to)
    }

  test('an example that names the key variable in env (the old AGENT_API_KEY setup)', async () => {
    const read = changed(
      'examples/pull-request.yml',
      '      agent: claude-code\n',
      '      agent: claude-code\n      env: AIRLOCK_AGENT_API_KEY\n'
    )
    expect((await leaks('examples/pull-request.yml', read)).join('\n')).toMatch(
      /env passes AIRLOCK_AGENT_API_KEY \(set from a secret\) into the sandbox/
    )
  })

  test('a reusable workflow that hands the key to a fork', async () => {
    const read = changed(
      '.github/workflows/agent-run.yml',
      "(github.event.pull_request == null || github.event.pull_request.head.repo.full_name == github.repository) && secrets.agent-api-key || ''",
      'secrets.agent-api-key'
    )
    expect((await leaks('examples/pull-request.yml', read)).join('\n')).toMatch(
      /run step \d+: AIRLOCK_AGENT_API_KEY holds a secret on a fork's pull request/
    )
  })
})

describe('what agent-run.yml hands the action on a pull request', () => {
  test.each([false, true])(
    'fork: %s — the head commit, the preset, and the key only to the proxy',
    async (fork) => {
      const ctx = contexts(fork)
      const caller = await loadWorkflow('examples/pull-request.yml')
      const call = await resolveCall(caller, 'airlock', ctx)
      const inner = { ...ctx, inputs: call.inputs, secrets: call.secrets }
      expect(jobRuns(call.callee, 'run', inner)).toBe(true)
      const steps = jobSteps(call.callee, 'run', inner)
      const checkout = steps.find(
        (s) => s.uses?.startsWith('actions/checkout@') && s.with.path === undefined
      )!
      expect(checkout.with).toMatchObject({
        ref: 'a'.repeat(40),
        'fetch-depth': '0',
        'persist-credentials': 'false'
      })
      const action = steps.find((s) => s.uses === './.airlock/action')!
      expect(action.with).toMatchObject({
        mode: 'run',
        ref: 'a'.repeat(40),
        agent: 'claude-code',
        env: ''
      })
      expect(action.env.AIRLOCK_AGENT_API_KEY).toBe(fork ? '' : SECRET)
    }
  )
})

describe("README's first setup", () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')
  const block = /## GitHub in ten minutes[\s\S]*?```yaml\n([\s\S]*?)```/
    .exec(readme)![1]
    .replace(/^ {3}/gm, '')

  test('is at most 15 lines of caller YAML', () => {
    expect(block.trim().split('\n').length).toBeLessThanOrEqual(15)
  })

  test('makes the same call as examples/pull-request.yml (same inputs and secrets)', async () => {
    const read: ReadWorkflow = (f) =>
      f === 'README.yml'
        ? block.replace(/COMMIT_SHA/g, '0'.repeat(40))
        : fs.readFileSync(path.join(ROOT, f), 'utf8')
    for (const fork of [false, true]) {
      const ctx = contexts(fork)
      const fromReadme = await resolveCall(
        await loadWorkflow('README.yml', read),
        'airlock',
        ctx,
        read
      )
      const fromExample = await resolveCall(
        await loadWorkflow('examples/pull-request.yml'),
        'airlock',
        ctx
      )
      expect(fromReadme.inputs).toEqual(fromExample.inputs)
      expect(fromReadme.secrets).toEqual(fromExample.secrets)
    }
    expect(await leaks('README.yml', read)).toEqual([])
  })
})
