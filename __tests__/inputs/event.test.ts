// The event is parsed once (src/event.ts); every decision about it comes from that one value.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { LOCAL_EVENT, parseEvent, readRunEvent } from '../../src/event.js'
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
    expect(parseEvent({ GITHUB_EVENT_NAME: 'push' }, 'not json').payload).toEqual({})
    expect(readRunEvent({ GITHUB_EVENT_PATH: '/nonexistent/event.json' }).payload).toEqual({})
    // Outside GitHub Actions: the repository's own scope on the machine.
    expect(scopeForEvent(LOCAL_EVENT, '/src/a')).toBe('local-3213ad7c2b804764')
    expect(scopeForEvent(LOCAL_EVENT, '/src/b')).not.toBe(scopeForEvent(LOCAL_EVENT, '/src/a'))
  })

  test('the run id and attempt of the runner', () => {
    expect(parseEvent({ GITHUB_RUN_ID: '42' }, undefined).run).toEqual({ id: '42', attempt: '1' })
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
