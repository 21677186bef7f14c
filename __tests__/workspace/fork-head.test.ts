/**
 * A Dockerfile from the head of a fork's pull request is never built (the runner's engine would run
 * its build steps outside the sandbox): forkHead tells a fork's head apart, from the event or, for
 * a commanded run, from the checkout's branches; run mode's inputs refuse `dockerfile` there.
 */
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { ConfigurationError } from '../../src/errors.js'
import { LOCAL_EVENT, type RunEvent } from '../../src/event.js'
import { runInputs } from '../../src/presets/run-inputs.js'
import { forkHead } from '../../src/workspace/fork-head.js'

let root: string
/** The checkout the reusable workflow makes: every branch under origin, the head detached. */
let checkout: string
/** A commit on the repository's main branch. */
let own: string
/** The fork's pull request head: only under refs/pull/21/head. */
let fork: string

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    env: {
      ...process.env,
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Dev',
      GIT_AUTHOR_EMAIL: 'dev@example.com',
      GIT_COMMITTER_NAME: 'Dev',
      GIT_COMMITTER_EMAIL: 'dev@example.com'
    }
  })
    .toString('utf8')
    .trim()
}

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-fork-head-'))
  const origin = path.join(root, 'origin')
  fs.mkdirSync(origin)
  git(origin, ['init', '-q', '-b', 'main'])
  fs.writeFileSync(path.join(origin, 'Dockerfile'), 'FROM scratch\n')
  git(origin, ['add', '-A'])
  git(origin, ['commit', '-q', '-m', 'base'])
  own = git(origin, ['rev-parse', 'HEAD'])
  git(origin, ['checkout', '-q', '-b', 'patch-1'])
  fs.writeFileSync(path.join(origin, 'Dockerfile'), 'FROM scratch\nRUN echo the fork\n')
  git(origin, ['commit', '-q', '-am', 'the fork'])
  fork = git(origin, ['rev-parse', 'HEAD'])
  git(origin, ['update-ref', 'refs/pull/21/head', fork])
  git(origin, ['checkout', '-q', 'main'])
  git(origin, ['branch', '-q', '-D', 'patch-1'])
  checkout = path.join(root, 'checkout')
  fs.mkdirSync(checkout)
  git(checkout, ['init', '-q'])
  git(checkout, ['remote', 'add', 'origin', origin])
  git(checkout, ['fetch', '-q', 'origin', '+refs/heads/*:refs/remotes/origin/*'])
  git(checkout, ['fetch', '-q', 'origin', fork])
  git(checkout, ['-c', 'advice.detachedHead=false', 'checkout', '-q', '--detach', fork])
  // A caller that fetched pull request heads under the remote, and a merge-queue branch.
  git(checkout, ['update-ref', 'refs/pull/21/head', fork])
  git(checkout, ['update-ref', 'refs/remotes/origin/pr/21', fork])
  git(checkout, ['update-ref', 'refs/remotes/origin/gh-readonly-queue/main/pr-21-x', fork])
})
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

function event(name: string, extra: Partial<RunEvent> = {}): RunEvent {
  return { name, serverUrl: 'https://github.com', sha: own, ...extra }
}
const pullRequest = (fork: boolean): RunEvent['pullRequest'] => ({
  number: 21,
  headRepository: fork ? 'mallory/hello' : 'octo-org/hello',
  fork
})

describe('forkHead', () => {
  test.each<[string, () => RunEvent, () => string | undefined, RegExp | undefined]>([
    [
      'a pull_request event from a fork',
      () => event('pull_request', { pullRequest: pullRequest(true) }),
      () => fork,
      /pull_request event's pull request comes from a fork \(mallory\/hello\)/
    ],
    [
      'a same-repository pull_request event',
      () => event('pull_request', { pullRequest: pullRequest(false) }),
      () => own,
      undefined
    ],
    [
      "a commanded run (issue_comment) pinned to the fork's head",
      () =>
        event('issue_comment', { pullRequest: { number: 21, headRepository: null, fork: null } }),
      () => fork,
      /is on no branch of this repository \(a fork's pull request head\)/
    ],
    [
      "a manual run (workflow_dispatch) pinned to the fork's head",
      () => event('workflow_dispatch'),
      () => fork,
      /on no branch/
    ],
    [
      'a commanded run pinned to a commit of a branch of the repository',
      () => event('issue_comment', { sha: 'a'.repeat(40) }),
      () => own,
      undefined
    ],
    [
      'a commit the checkout does not have (fail closed)',
      () => event('issue_comment'),
      () => 'c'.repeat(40),
      /does not name a commit/
    ],
    ['the run on its event’s own commit', () => event('workflow_dispatch'), () => own, undefined],
    // Any form of the fork's commit is resolved first: none slips past as "not a pinned SHA".
    [
      "the fork's head as HEAD (the checkout's)",
      () => event('issue_comment'),
      () => 'HEAD',
      /on no branch/
    ],
    [
      "the fork's head in capitals",
      () => event('issue_comment'),
      () => fork.toUpperCase(),
      /on no branch/
    ],
    [
      "the fork's head as a short SHA",
      () => event('issue_comment'),
      () => fork.slice(0, 10),
      /on no branch/
    ],
    [
      "the fork's head as refs/pull/21/head",
      () => event('issue_comment'),
      () => 'refs/pull/21/head',
      /on no branch/
    ],
    // A pull request head fetched under the remote's namespace, or a merge-queue branch, is no branch of the repository.
    [
      "the fork's head also under refs/remotes/origin/pr/21",
      () => event('issue_comment'),
      () => fork,
      /on no branch/
    ],
    [
      'a branch name of the repository',
      () => event('issue_comment'),
      () => 'origin/main',
      undefined
    ],
    [
      'a ref the checkout cannot resolve',
      () => event('issue_comment'),
      () => 'no-such-ref',
      /does not name a commit/
    ],
    ['the CLI (no event)', () => LOCAL_EVENT, () => fork, undefined]
  ])('%s', async (_name, ev, ref, expected) => {
    const why = await forkHead({ event: ev(), ref: ref(), repoPath: checkout })
    if (expected === undefined) expect(why).toBeUndefined()
    else expect(why).toMatch(expected)
  })
})

describe("run mode's inputs", () => {
  const commanded = (): RunEvent =>
    event('issue_comment', { pullRequest: { number: 21, headRepository: null, fork: null } })
  const read =
    (inputs: Record<string, string>) =>
    (name: string): string | undefined =>
      inputs[name]

  test("refuse `dockerfile` on a fork's head: a ConfigurationError naming it and the fix", async () => {
    const error = await runInputs(read({ dockerfile: 'Dockerfile', ref: fork }), {
      workspace: checkout,
      env: {},
      event: commanded()
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ConfigurationError)
    expect((error as ConfigurationError).input).toBe('dockerfile')
    expect((error as ConfigurationError).message).toMatch(
      /^dockerfile: .*fork.*never built.*`agent: claude-code`.*`image: name@sha256:\.\.\.`/
    )
  })

  test("refuse `build-context` on a fork's head, also with a preset (its Dockerfile would copy the fork's files)", async () => {
    const error = await runInputs(read({ agent: 'codex', 'build-context': '.', ref: fork }), {
      workspace: checkout,
      env: { AIRLOCK_AGENT_API_KEY: 'k' },
      event: commanded()
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ConfigurationError)
    expect((error as ConfigurationError).input).toBe('build-context')
  })

  test("a preset's own Dockerfile, or a pinned image, runs on a fork's head", async () => {
    await expect(
      runInputs(read({ agent: 'claude-code', ref: fork }), {
        workspace: checkout,
        env: { AIRLOCK_AGENT_API_KEY: 'k' },
        event: commanded()
      })
    ).resolves.toMatchObject({ context: { preset: { name: 'claude-code' } } })
    await expect(
      runInputs(read({ image: `a@sha256:${'0'.repeat(64)}`, ref: fork }), {
        workspace: checkout,
        env: {},
        event: commanded()
      })
    ).resolves.toBeDefined()
  })

  test("the repository's own Dockerfile on a branch commit is built as before", async () => {
    await expect(
      runInputs(read({ dockerfile: 'Dockerfile', ref: own }), {
        workspace: checkout,
        env: {},
        event: event('issue_comment', { sha: 'a'.repeat(40) })
      })
    ).resolves.toBeDefined()
  })
})
