/**
 * GitHub's rules, enforced by the API stand-in and the runner emulation, each shown biting — on
 * the workflow files as shipped where a rule is about them. The rules themselves are in
 * __fixtures__/github-rules.ts (with where GitHub documents each).
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { PEOPLE, PR_NUMBER, TOKEN, makeWorld, webhook } from '../../__fixtures__/action-harness.js'
import type { World } from '../../__fixtures__/action-harness.js'
import {
  refusedAppPermissions,
  runSecrets,
  startsWorkflows,
  tokenPermissions,
  waitsForApproval,
  workflowRevision
} from '../../__fixtures__/github-rules.js'
import {
  ROOT,
  githubContext,
  jobSteps,
  loadWorkflow,
  resolveCall,
  type Contexts,
  type ReadWorkflow
} from '../../__fixtures__/workflows.js'

let world: World
beforeEach(async () => {
  world = await makeWorld()
})
afterEach(async () => {
  await world.close()
})

async function api(
  method: string,
  route: string,
  token: string,
  body?: unknown
): Promise<{ status: number; data: Record<string, unknown> }> {
  const res = await fetch(`${world.api.url}/repos/octo-org/hello${route}`, {
    method,
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {})
  })
  const text = await res.text()
  return { status: res.status, data: (text === '' ? {} : JSON.parse(text)) as never }
}

const head = (): string => world.api.git(['rev-parse', 'refs/heads/feature']).trim()

describe('an event caused by GITHUB_TOKEN starts no workflow', () => {
  test('a branch pushed and a pull request opened with GITHUB_TOKEN start nothing; by a person they do', async () => {
    world.api.settings.actionsCanCreatePullRequests = true
    const sha = head()
    expect((await api('POST', '/git/refs', TOKEN, { ref: 'refs/heads/bot', sha })).status).toBe(201)
    const opened = await api('POST', '/pulls', TOKEN, { title: 't', head: 'bot', base: 'main' })
    expect(opened.status).toBe(201)
    const byPerson = await api('POST', '/issues/7/comments', `token-${PEOPLE.writer.login}`, {
      body: '/airlock run'
    })
    expect(byPerson.status).toBe(201)
    expect(world.api.events).toEqual([
      { name: 'push', actor: 'github-actions[bot]', byWorkflowToken: true, startsWorkflows: false },
      {
        name: 'pull_request',
        action: 'opened',
        actor: 'github-actions[bot]',
        pull: opened.data.number,
        byWorkflowToken: true,
        startsWorkflows: false
      },
      {
        name: 'issue_comment',
        action: 'created',
        actor: PEOPLE.writer.login,
        pull: PR_NUMBER,
        byWorkflowToken: false,
        startsWorkflows: true
      }
    ])
  })

  test('except workflow_dispatch and repository_dispatch', () => {
    expect(startsWorkflows('workflow_dispatch', true)).toBe(true)
    expect(startsWorkflows('repository_dispatch', true)).toBe(true)
    expect(startsWorkflows('pull_request', true)).toBe(false)
  })
})

describe('POST /pulls by GITHUB_TOKEN', () => {
  test('is 403 while the repository does not allow Actions to create pull requests (the default)', async () => {
    world.api.git(['update-ref', 'refs/heads/bot', head()])
    const body = { title: 't', head: 'bot', base: 'main' }
    const refused = await api('POST', '/pulls', TOKEN, body)
    expect(refused).toEqual({
      status: 403,
      data: { message: 'GitHub Actions is not permitted to create or approve pull requests.' }
    })
    expect(world.api.pulls.size).toBe(1)
    // A person's token (or an App's) may.
    expect((await api('POST', '/pulls', `token-${PEOPLE.writer.login}`, body)).status).toBe(201)
    world.api.settings.actionsCanCreatePullRequests = true
    expect((await api('POST', '/pulls', TOKEN, { ...body, title: 'u' })).status).toBe(201)
  })
})

describe('a required status never reported leaves the pull request blocked', () => {
  test('blocked with no status, blocked while pending, clean once success', async () => {
    world.api.requiredContexts.push('airlock/approval')
    const state = async () =>
      (await api('GET', `/pulls/${PR_NUMBER}`, TOKEN)).data.mergeable_state as string
    expect(await state()).toBe('blocked')
    const post = (s: string) =>
      api('POST', `/statuses/${head()}`, TOKEN, { state: s, context: 'airlock/approval' })
    await post('pending')
    expect(await state()).toBe('blocked')
    await post('success')
    expect(await state()).toBe('clean')
    world.api.push('feature')
    expect(await state()).toBe('blocked')
  })
})

const FORK_PULL = githubContext(
  'pull_request',
  webhook('pull_request', 'synchronize', (p) => {
    p.pull_request.head.repo.full_name = 'mallory/hello'
  }),
  { sha: 'b'.repeat(40), ref: 'refs/pull/7/merge' }
)

describe("a fork's pull request runs get a read-only token and no secrets; Dependabot's only Dependabot secrets", () => {
  const repository = { ANTHROPIC_API_KEY: 'sk-repo' }

  test.each([
    ['a same-repository pull request', { event: 'pull_request' }, 'sk-repo'],
    ["a fork's pull request", { event: 'pull_request', fork: true }, ''],
    ["a fork's review", { event: 'pull_request_review', fork: true }, ''],
    ['Dependabot without a Dependabot secret', { event: 'pull_request', dependabot: true }, ''],
    [
      "a comment on a fork's pull request (issue_comment)",
      { event: 'issue_comment', fork: true },
      'sk-repo'
    ]
  ])('%s: examples/pull-request.yml hands agent-run.yml the key (%#)', async (_, origin, key) => {
    const ctx: Contexts = { github: FORK_PULL, secrets: runSecrets(origin, { repository }) }
    const call = await resolveCall(await loadWorkflow('examples/pull-request.yml'), 'airlock', ctx)
    expect(call.secrets['agent-api-key']).toBe(key)
  })

  test('Dependabot gets the Dependabot secret of the same name', () => {
    const secrets = runSecrets(
      { event: 'pull_request', dependabot: true },
      { repository, dependabot: { ANTHROPIC_API_KEY: 'sk-dependabot' } }
    )
    expect(secrets).toEqual({ ANTHROPIC_API_KEY: 'sk-dependabot' })
  })

  test("the publish job of a fork's run cannot set the gate: its token is read-only and the stand-in answers 403", async () => {
    const call = await resolveCall(await loadWorkflow('examples/pull-request.yml'), 'airlock', {
      github: FORK_PULL
    })
    const granted = tokenPermissions(
      { event: 'pull_request', fork: true },
      call.permissions.publish
    )
    expect(granted.statuses).toBe('read')
    world.api.tokenPermissions.set(TOKEN, granted)
    const status = await api('POST', `/statuses/${head()}`, TOKEN, {
      state: 'pending',
      context: 'airlock/approval'
    })
    expect(status.status).toBe(403)
    // The same job of a same-repository pull request can.
    world.api.tokenPermissions.set(
      TOKEN,
      tokenPermissions({ event: 'pull_request' }, call.permissions.publish)
    )
    expect(
      (
        await api('POST', `/statuses/${head()}`, TOKEN, {
          state: 'pending',
          context: 'airlock/approval'
        })
      ).status
    ).toBe(201)
  })
})

test("a first-time contributor's fork runs wait for a maintainer's approval; a comment's do not", () => {
  expect(waitsForApproval({ event: 'pull_request', fork: true, firstTimeContributor: true })).toBe(
    true
  )
  expect(
    waitsForApproval({ event: 'pull_request_review', fork: true, firstTimeContributor: true })
  ).toBe(true)
  expect(waitsForApproval({ event: 'pull_request', fork: true })).toBe(false)
  expect(waitsForApproval({ event: 'issue_comment', fork: true, firstTimeContributor: true })).toBe(
    false
  )
})

describe('which copy of a workflow file runs', () => {
  /** A ReadWorkflow of the repository's files at a commit. */
  const readAt =
    (rev: string): ReadWorkflow =>
    (file) =>
      file.startsWith('.github/workflows/agent-')
        ? fs.readFileSync(path.join(ROOT, file), 'utf8')
        : world.api.git(['show', `${rev}:${file}`])

  test("issue_comment and workflow_run read the default branch's, pull_request_review_comment the pull request's", async () => {
    const shipped = fs.readFileSync(path.join(ROOT, 'examples/comment-run.yml'), 'utf8')
    const commit = (parent: string, text: string): string => {
      const blob = world.api.git(['hash-object', '-w', '--stdin'], text).trim()
      const tree = world.api.git(['mktree'], `100644 blob ${blob}\tcomment-run.yml\n`).trim()
      const wfTree = world.api.git(['mktree'], `040000 tree ${tree}\tworkflows\n`).trim()
      const root = world.api.git(['mktree'], `040000 tree ${wfTree}\t.github\n`).trim()
      return world.api
        .git([
          '-c',
          'user.name=t',
          '-c',
          'user.email=t@example.com',
          'commit-tree',
          root,
          '-p',
          parent,
          '-m',
          'x'
        ])
        .trim()
    }
    const main = commit(world.base, shipped)
    // The pull request's copy asks for a secret it should never see.
    const merge = commit(main, shipped.replace('agent: claude-code', 'agent: mallory-agent'))
    const agentOf = async (event: string): Promise<unknown> => {
      const rev = workflowRevision(event, { defaultBranch: main, pullRequestMerge: merge })
      const w = await loadWorkflow('.github/workflows/comment-run.yml', readAt(rev))
      const job = w.template.jobs.find((j: { id: { value: string } }) => j.id.value === 'airlock')
      const inputs = job['input-values'].map as {
        key: { value: string }
        value: { value: string }
      }[]
      return inputs.find((p) => p.key.value === 'agent')?.value.value
    }
    expect(await agentOf('issue_comment')).toBe('claude-code')
    expect(await agentOf('workflow_run')).toBe('claude-code')
    expect(await agentOf('pull_request_review_comment')).toBe('mallory-agent')
    expect(await agentOf('pull_request_review')).toBe('mallory-agent')
  })
})

describe('an App installation token asking for a permission the App lacks is refused (422)', () => {
  const APP_SECRETS = { AIRLOCK_APP_CLIENT_ID: 'Iv1.abc', AIRLOCK_APP_PRIVATE_KEY: 'key' }
  /** The token step of agent-approve.yml as examples/approve.yml calls it. */
  async function tokenStep(github: Record<string, unknown>, teams = false) {
    const text = fs
      .readFileSync(path.join(ROOT, 'examples/approve.yml'), 'utf8')
      // The example's own commented-out lines, switched on.
      .replace(
        '    # with:\n    #   team-approvers: true\n',
        teams ? '    with:\n      team-approvers: true\n' : ''
      )
    const read: ReadWorkflow = (f) =>
      f === 'examples/approve.yml' ? text : fs.readFileSync(path.join(ROOT, f), 'utf8')
    const caller = await loadWorkflow('examples/approve.yml', read)
    const call = await resolveCall(caller, 'approve', { github, secrets: APP_SECRETS }, read)
    const ctx: Contexts = { github, inputs: call.inputs, secrets: call.secrets }
    const steps = jobSteps(call.callee, 'approve', {
      ...ctx,
      env: { AIRLOCK_USE_APP: 'true' }
    })
    const minting = steps.filter((s) => s.uses?.startsWith('actions/create-github-app-token@'))
    expect(minting.filter((s) => s.runs).length).toBe(1)
    const step = minting.find((s) => s.runs)
    if (step === undefined) throw new Error('no app-token step')
    return step
  }
  const comment = githubContext(
    'issue_comment',
    webhook('issue_comment', 'created', (p) => {
      p.comment.body = '/airlock approve abc123'
    }),
    { sha: 'a'.repeat(40), ref: 'refs/heads/main' }
  )

  test('the rule: a permission the App was not granted, or a lower level, is refused', () => {
    const granted = { contents: 'read', 'pull-requests': 'write' } as const
    expect(refusedAppPermissions(granted, { 'permission-contents': 'read' })).toBeUndefined()
    expect(refusedAppPermissions(granted, { 'permission-contents': 'write' })).toMatch(
      /The permissions requested are not granted to this installation/
    )
    expect(refusedAppPermissions(granted, { 'permission-members': 'read' })).toMatch(
      /members: read asked, the App has none/
    )
  })

  test('examples/approve.yml as shipped mints a token for an App without the Members permission (members only when teams approve)', async () => {
    const step = await tokenStep(comment)
    const app = { contents: 'read', 'pull-requests': 'write', statuses: 'write' } as const
    expect(refusedAppPermissions(app, step.with)).toBeUndefined()
  })

  test('with `team-approvers: true` the token asks for Members too: an App without it is refused', async () => {
    const step = await tokenStep(comment, true)
    const app = { contents: 'read', 'pull-requests': 'write', statuses: 'write' } as const
    expect(refusedAppPermissions(app, step.with)).toMatch(/members: read asked, the App has none/)
    expect(refusedAppPermissions({ ...app, members: 'read' }, step.with)).toBeUndefined()
  })
})
