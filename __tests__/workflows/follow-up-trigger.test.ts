// Which comments start examples/comment-run.yml's command job, as GitHub evaluates its `if:`: a
// pull request comment, and a reply in a review thread on a same-repository pull request (the
// event runs the pull request's own copy of the file, and on a fork's pull request has no secret
// and a read-only token); the follow-up's outputs reach the reusable workflow.
import { webhook } from '../../__fixtures__/action-harness.js'
import {
  githubContext,
  jobRuns,
  loadWorkflow,
  resolveCall,
  type Contexts
} from '../../__fixtures__/workflows.js'

const MAIN = 'e'.repeat(40)

function reviewReply(o: { fork: boolean; reply: boolean; body?: string }): Contexts {
  const event = webhook('pull_request_review_comment', 'created', (p) => {
    p.pull_request.number = 7
    p.pull_request.head.repo.full_name = o.fork ? 'mallory/hello' : 'octo-org/hello'
    p.comment.body = o.body ?? '/airlock run handle the empty name'
    if (o.reply) p.comment.in_reply_to_id = 1001000
    else delete p.comment.in_reply_to_id
  })
  return {
    github: githubContext('pull_request_review_comment', event, {
      sha: MAIN,
      ref: 'refs/pull/7/merge'
    })
  }
}

test.each([
  ['a reply in a thread, same repository', { fork: false, reply: true }, true],
  ['a reply in a thread on a fork’s pull request', { fork: true, reply: true }, false],
  ['a new inline comment (in no thread)', { fork: false, reply: false }, false],
  ['a reply that is no command', { fork: false, reply: true, body: 'thanks' }, false]
])('%s → command job runs: %s', async (_n, o, runs) => {
  const w = await loadWorkflow('examples/comment-run.yml')
  expect(jobRuns(w, 'command', reviewReply(o))).toBe(runs)
})

test('a pull request comment still starts it, and the follow-up outputs reach agent-run.yml', async () => {
  const event = webhook('issue_comment', 'created', (p) => {
    p.issue.number = 7
    p.issue.pull_request = { url: 'https://api.github.com/repos/octo-org/hello/pulls/7' }
    p.comment.body = '/airlock run also update the changelog'
  })
  const ctx: Contexts = {
    github: githubContext('issue_comment', event, { sha: MAIN, ref: 'refs/heads/main' }),
    secrets: { ANTHROPIC_API_KEY: 'k' }
  }
  const w = await loadWorkflow('examples/comment-run.yml')
  expect(jobRuns(w, 'command', ctx)).toBe(true)
  const needs = {
    command: {
      result: 'success',
      outputs: {
        'run-requested': 'true',
        task: 'also update the changelog',
        'head-sha': 'a'.repeat(40),
        'base-sha': MAIN,
        'pull-request': '7',
        'continue-run-id': '123',
        'continue-artifact': 'airlock-123-1',
        'continue-context': '{"runId":"123-1"}'
      }
    }
  }
  const call = await resolveCall(w, 'airlock', { ...ctx, needs })
  expect(call.inputs).toMatchObject({
    'continue-run-id': '123',
    'continue-artifact': 'airlock-123-1',
    'continue-context': '{"runId":"123-1"}'
  })
})
