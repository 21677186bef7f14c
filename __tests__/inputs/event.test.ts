// The event is parsed once (src/event.ts); every decision about it comes from that one value.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { LOCAL_EVENT, parseEvent, readRunEvent, repositoryOf, runUrl } from '../../src/event.js'
import { readRunner } from '../../src/runner.js'
import type { RunEvent } from '../../src/event.js'
import { getInputs } from '../../src/inputs.js'
import { runInputs } from '../../src/presets/run-inputs.js'
import { scopeForEvent } from '../../src/cache/keys.js'
import { ROOT } from '../support/cli.js'

const BASE = 'a'.repeat(40)
const HEAD = 'b'.repeat(40)

/** A pull_request payload whose head repository is `head` (null: the fork was deleted). */
function pullRequestPayload(head: string | null | 'absent'): string {
  return JSON.stringify({
    pull_request: {
      number: 7,
      user: { login: 'contributor' },
      base: { sha: BASE, repo: { full_name: 'o/r' } },
      head: {
        sha: HEAD,
        ...(head === 'absent' ? {} : { repo: head === null ? null : { full_name: head } })
      }
    },
    repository: { default_branch: 'main' }
  })
}

describe('parseEvent', () => {
  test.each<[string, string | null | 'absent', boolean]>([
    ['a fork', 'someone/r', true],
    ['the same repository', 'o/r', false],
    ['a deleted fork (head.repo null)', null, true],
    ['no head repository at all', 'absent', true]
  ])('%s', (_name, head, fork) => {
    const e = parseEvent(
      {
        GITHUB_EVENT_NAME: 'pull_request',
        GITHUB_REPOSITORY: 'o/r',
        GITHUB_REF: 'refs/pull/7/merge'
      },
      pullRequestPayload(head)
    )
    expect(e.pullRequest).toMatchObject({
      number: 7,
      baseSha: BASE,
      headSha: HEAD,
      fork,
      author: 'contributor'
    })
    expect(e.repository).toEqual({ owner: 'o', repo: 'r' })
    expect(e.defaultBranch).toBe('main')
  })

  test('an issue comment on a pull request: its number, no head, fork unknown', () => {
    const e = parseEvent(
      { GITHUB_EVENT_NAME: 'issue_comment' },
      JSON.stringify({ issue: { number: 3, pull_request: {} } })
    )
    expect(e.pullRequest).toEqual({ number: 3, headRepository: null, fork: null })
    expect(scopeForEvent(e, '/src/a')).toBe('pr-3')
  })

  test('the head commit only on pull_request* events; unreadable payloads are no event', () => {
    expect(
      parseEvent({ GITHUB_EVENT_NAME: 'workflow_run' }, pullRequestPayload('o/r')).pullRequest
        ?.headSha
    ).toBeUndefined()
    expect(parseEvent({ GITHUB_EVENT_NAME: 'push' }, 'not json')).toEqual({
      name: 'push',
      serverUrl: 'https://github.com'
    })
    expect(readRunEvent({ GITHUB_EVENT_PATH: '/nonexistent/event.json' })).toEqual(LOCAL_EVENT)
    // Outside GitHub Actions: the repository's own scope on the machine.
    expect(scopeForEvent(LOCAL_EVENT, '/src/a')).toBe('local-3213ad7c2b804764')
    expect(scopeForEvent(LOCAL_EVENT, '/src/b')).not.toBe(scopeForEvent(LOCAL_EVENT, '/src/a'))
  })

  test('the run id and attempt of the runner', () => {
    expect(parseEvent({ GITHUB_RUN_ID: '42' }, undefined).run).toEqual({ id: '42', attempt: '1' })
  })

  test('a comment, its author and the thread it replies in (review comments only)', () => {
    const comment = { id: 9, body: '/airlock run x', user: { login: 'w', type: 'User' } }
    const onIssue = parseEvent(
      { GITHUB_EVENT_NAME: 'issue_comment' },
      JSON.stringify({ action: 'created', comment: { ...comment, in_reply_to_id: 5 } })
    )
    expect(onIssue.action).toBe('created')
    expect(onIssue.comment).toEqual({
      id: 9,
      body: '/airlock run x',
      author: { login: 'w', type: 'User' }
    })
    const reply = (v: unknown): RunEvent =>
      parseEvent(
        { GITHUB_EVENT_NAME: 'pull_request_review_comment' },
        JSON.stringify({ comment: { ...comment, in_reply_to_id: v } })
      )
    expect(reply(5).comment?.inReplyToId).toBe(5)
    expect(reply('5').comment?.inReplyToId).toBeUndefined()
    expect(reply(2 ** 60).comment?.inReplyToId).toBeUndefined()
    // A comment without a body or an author is no comment; another event's comment is not read.
    const odd = (c: unknown, name = 'issue_comment'): RunEvent =>
      parseEvent({ GITHUB_EVENT_NAME: name }, JSON.stringify({ comment: c }))
    expect(odd({ id: 9, body: 7, user: { login: 'w' } }).comment).toBeUndefined()
    expect(odd({ id: 9, body: 'x', user: { login: 1 } }).comment).toBeUndefined()
    expect(odd(comment, 'push').comment).toBeUndefined()
  })

  test('the review of a pull_request_review event, in the shape of the API review', () => {
    const e = parseEvent(
      { GITHUB_EVENT_NAME: 'pull_request_review' },
      JSON.stringify({
        action: 'submitted',
        review: { id: 3, state: 'approved', body: null, commit_id: HEAD, user: { login: 'w' } }
      })
    )
    expect(e.review).toEqual({
      id: 3,
      state: 'approved',
      commit_id: HEAD,
      user: { login: 'w', type: '' }
    })
  })

  test('the finished run of a workflow_run event; a malformed one is none', () => {
    const run = (r: Record<string, unknown>): RunEvent =>
      parseEvent({ GITHUB_EVENT_NAME: 'workflow_run' }, JSON.stringify({ workflow_run: r }))
    const good = {
      id: 77,
      head_sha: HEAD,
      head_repository: { full_name: 'fork/r' },
      event: 'pull_request',
      conclusion: 'success'
    }
    expect(run(good).workflowRun).toEqual({
      id: 77,
      headSha: HEAD,
      headRepository: 'fork/r',
      event: 'pull_request',
      conclusion: 'success'
    })
    expect(run({ ...good, head_sha: 'HEAD' }).workflowRun).toBeUndefined()
    expect(run({ ...good, head_repository: null }).workflowRun).toBeUndefined()
    expect(run({ ...good, id: '77' }).workflowRun).toBeUndefined()
  })

  test('the sender, the API address and the run page', () => {
    const e = parseEvent(
      {
        GITHUB_EVENT_NAME: 'workflow_dispatch',
        GITHUB_REPOSITORY: 'o/r',
        GITHUB_RUN_ID: '42',
        GITHUB_API_URL: 'http://127.0.0.1:9/api/',
        GITHUB_SERVER_URL: 'https://ghe.example/'
      },
      JSON.stringify({ sender: { login: 'w', type: 'User' } })
    )
    expect(e.sender).toEqual({ login: 'w', type: 'User' })
    expect(e.apiUrl).toBe('http://127.0.0.1:9/api')
    expect(runUrl(e)).toBe('https://ghe.example/o/r/actions/runs/42')
    expect(runUrl(parseEvent({ GITHUB_RUN_ID: '42' }, undefined))).toBeUndefined()
    expect(() => repositoryOf(LOCAL_EVENT)).toThrow(/GITHUB_REPOSITORY/)
  })
})

describe('the runner facts, read once', () => {
  test('RUNNER_*, the summary file and the id-token endpoint', () => {
    expect(
      readRunner({
        GITHUB_ACTIONS: 'true',
        RUNNER_OS: 'Linux',
        RUNNER_ARCH: 'X64',
        RUNNER_TEMP: '/t',
        GITHUB_STEP_SUMMARY: '/s',
        ACTIONS_ID_TOKEN_REQUEST_URL: 'http://127.0.0.1:1/token'
      })
    ).toEqual({
      temp: '/t',
      github: { os: 'Linux', arch: 'X64', imageOs: null },
      stepSummary: true,
      idToken: true
    })
    // Outside Actions: no runner facts, no summary, no id-token; an empty variable is unset.
    expect(readRunner({ RUNNER_OS: 'Linux', RUNNER_TEMP: '', GITHUB_STEP_SUMMARY: '' })).toEqual({
      github: null,
      stepSummary: false,
      idToken: false
    })
  })
})

describe('a deleted fork is a fork, for every decision', () => {
  let dir: string
  let event: RunEvent
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-event-'))
    fs.writeFileSync(path.join(dir, 'Dockerfile'), 'FROM scratch\n')
    const file = path.join(dir, 'event.json')
    fs.writeFileSync(file, pullRequestPayload(null))
    event = readRunEvent({
      GITHUB_EVENT_NAME: 'pull_request_target',
      GITHUB_EVENT_PATH: file,
      GITHUB_REPOSITORY: 'o/r'
    })
  })
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  test('the isolation choice sees a fork', () => {
    const inputs = getInputs(
      (n) => ({ dockerfile: 'Dockerfile', 'agent-command': 'a', isolation: 'auto' })[n],
      {
        workspace: dir,
        environment: {},
        event,
        hostUid: 1000,
        hostCpus: 2,
        defaultRunId: 'r'
      }
    )
    expect(inputs.isolation).toEqual({ requested: 'auto', fallback: null, fork: true })
  })

  test("the preset's message tells the fork why it has no key", async () => {
    await expect(
      runInputs((n) => ({ agent: 'claude-code', ref: 'HEAD' })[n], {
        workspace: dir,
        env: {},
        event,
        root: ROOT
      })
    ).rejects.toThrow(/comes from a fork/)
  })
})
