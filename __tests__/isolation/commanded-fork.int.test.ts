// A run a writer commanded (`/airlock run`, issue_comment) or started by hand (workflow_dispatch)
// on a fork's pull request head: the event carries no fork flag, but the fork guard knows the head
// is a fork's. The isolation tier and the cache scope use what it knows: the real edge (git),
// then a real run on the real daemon under gVisor.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import type { RunEvent } from '../../src/event.js'
import { readRunInputs } from '../../src/inputs/read-run.js'
import { MemoryLogger } from '../../src/log.js'
import { runPipeline } from '../../src/pipeline/run.js'
import { planRun } from '../../src/plan.js'
import { DockerRuntime } from '../../src/sandbox/docker/index.js'
import { BUSYBOX, docker, imageId, leftovers, uniqueRunId } from '../support/run.js'
import { git } from '../support/git.js'
import { testHost } from '../support/host.js'

let root: string
/** The checkout as a commanded run makes it: the repository's branches under origin, the fork's head checked out and on a local branch (gh pr checkout). */
let workspace: string
let own: string
let fork: string

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-commanded-fork-'))
  const origin = path.join(root, 'origin')
  fs.mkdirSync(origin)
  git(origin, 'init', '-q', '-b', 'main')
  fs.writeFileSync(path.join(origin, 'README.md'), 'hello\n')
  git(origin, 'add', '-A')
  git(origin, 'commit', '-q', '-m', 'base')
  own = git(origin, 'rev-parse', 'HEAD').trim()
  git(origin, 'checkout', '-q', '-b', 'fork-work')
  fs.writeFileSync(path.join(origin, 'README.md'), 'hello from a fork\n')
  git(origin, 'commit', '-q', '-am', 'the fork')
  fork = git(origin, 'rev-parse', 'HEAD').trim()
  git(origin, 'update-ref', 'refs/pull/21/head', fork)
  git(origin, 'checkout', '-q', 'main')
  git(origin, 'branch', '-q', '-D', 'fork-work')
  workspace = path.join(root, 'ws')
  const repo = path.join(workspace, 'repo')
  fs.mkdirSync(repo, { recursive: true })
  git(repo, 'init', '-q', '-b', 'main')
  git(repo, 'remote', 'add', 'origin', origin)
  git(repo, 'fetch', '-q', 'origin', '+refs/heads/*:refs/remotes/origin/*')
  git(repo, 'fetch', '-q', 'origin', 'pull/21/head:pr-21')
  git(repo, '-c', 'advice.detachedHead=false', 'checkout', '-q', 'pr-21')
  fs.mkdirSync(path.join(workspace, 'agent'))
  fs.writeFileSync(path.join(workspace, 'agent', 'Dockerfile'), `FROM ${imageId(BUSYBOX)}\n`)
})
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

function eventOf(name: 'issue_comment' | 'workflow_dispatch'): RunEvent {
  return {
    name,
    serverUrl: 'https://github.com',
    repository: { owner: 'octo-org', repo: 'hello' },
    // These events run on the default branch: their own commit is main's.
    sha: own,
    ref: 'refs/heads/main',
    refName: 'main',
    defaultBranch: 'main',
    ...(name === 'issue_comment'
      ? { pullRequest: { number: 21, headRepository: null, fork: null } }
      : {})
  }
}

async function edge(name: 'issue_comment' | 'workflow_dispatch', runId: string) {
  const values: Record<string, string> = {
    path: 'repo',
    ref: fork,
    // A pinned image passes the fork guard; the run below builds the same busybox instead.
    image: `registry.invalid/agent@sha256:${'0'.repeat(64)}`,
    'agent-command': 'echo hi > out.txt',
    isolation: 'auto',
    'timeout-minutes': '2',
    memory: '256m',
    cpus: '1',
    'run-id': runId
  }
  return readRunInputs((n) => values[n], {
    workspace,
    environment: { GITHUB_ACTIONS: 'true' },
    hostUid: process.getuid?.() ?? 1000,
    event: eventOf(name),
    hostCpus: os.cpus().length,
    defaultRunId: runId
  })
}

describe("a commanded or manual run on a fork's head", () => {
  test.each(['issue_comment', 'workflow_dispatch'] as const)(
    '%s: the edge marks the run a fork’s, and its cache scope is not the default branch’s',
    async (name) => {
      const inputs = await edge(name, uniqueRunId('fork-edge'))
      expect(inputs.isolation).toMatchObject({ requested: 'auto', fork: true })
      expect(inputs.cache?.scope).not.toBe('base')
      if (name === 'workflow_dispatch') expect(inputs.cache?.scope).toMatch(/^ref-[a-f0-9]{16}$/)
    }
  )

  test('the real run: auto chooses gVisor because the head is a fork’s, and the agent ran under runsc', async () => {
    const runId = uniqueRunId('fork-run')
    const inputs = await edge('workflow_dispatch', runId)
    const dockerfile = path.join(workspace, 'agent', 'Dockerfile')
    const plan = planRun({
      ...inputs,
      image: undefined,
      dockerfile,
      buildContext: path.dirname(dockerfile)
    })
    const result = await runPipeline(
      plan,
      { task: inputs.task.text, env: inputs.env },
      {
        runtime: new DockerRuntime(testHost, docker),
        log: new MemoryLogger(),
        toolEnv: testHost.toolEnv
      }
    )
    const report = result.report
    expect(report.outcome).toBe('success')
    expect(report.repo.headSha).toBe(fork)
    expect(report.isolation).toMatchObject({ requested: 'auto', tier: 'runsc' })
    expect(report.isolation?.reasons).toContain('the pull request comes from a fork')
    expect(report.sandbox.applied?.runtime).toBe('runsc')
    expect(await leftovers(runId)).toBe(0)
  }, 180_000)
})
