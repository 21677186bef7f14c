/**
 * The token permissions of the reusable workflows' jobs as GitHub computes them for a call, and
 * the check GitHub makes before any job starts (and before any `if:` is evaluated): a nested job
 * may not ask for more than the calling job grants, or the whole workflow is invalid.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import YAML from 'yaml'
import {
  ROOT,
  githubContext,
  loadWorkflow,
  resolveCall,
  type Contexts,
  type ReadWorkflow
} from '../../__fixtures__/workflows.js'
import { webhook } from '../../__fixtures__/action-harness.js'

const ctx: Contexts = {
  github: githubContext(
    'pull_request',
    webhook('pull_request', 'synchronize', () => undefined),
    { sha: 'b'.repeat(40), ref: 'refs/pull/7/merge' }
  )
}

/** Every job of an example that calls a reusable workflow. */
const CALLS = fs
  .readdirSync(path.join(ROOT, 'examples'))
  .filter((f) => f.endsWith('.yml'))
  .flatMap((f) => {
    const wf = YAML.parse(fs.readFileSync(path.join(ROOT, 'examples', f), 'utf8')) as {
      jobs: Record<string, { uses?: string }>
    }
    return Object.entries(wf.jobs)
      .filter(([, j]) => j.uses !== undefined)
      .map(([id]) => [`examples/${f}`, id] as const)
  })

test('the examples call the reusable workflows', () => {
  expect(CALLS.map((c) => c.join(':'))).toEqual(
    expect.arrayContaining([
      'examples/pull-request.yml:airlock',
      'examples/manual-task.yml:airlock',
      'examples/approve.yml:approve',
      'examples/fork-publish.yml:publish'
    ])
  )
})

test.each(CALLS)('%s (%s) grants every nested job what it asks for', async (file, job) => {
  const call = await resolveCall(await loadWorkflow(file), job, ctx)
  expect(Object.keys(call.permissions).length).toBeGreaterThan(0)
})

/** A caller of agent-run.yml granting `grant` (the README's snippets). */
async function agentRun(grant: Record<string, string>) {
  const text = YAML.stringify({
    on: 'pull_request',
    permissions: {},
    jobs: {
      airlock: {
        uses: `OWNER/agent-airlock/.github/workflows/agent-run.yml@${'0'.repeat(40)}`,
        permissions: grant,
        with: { 'airlock-repository': 'OWNER/agent-airlock', 'airlock-ref': '0'.repeat(40) }
      }
    }
  })
  const read: ReadWorkflow = (f) =>
    f === 'caller.yml' ? text : fs.readFileSync(path.join(ROOT, f), 'utf8')
  return resolveCall(await loadWorkflow('caller.yml', read), 'airlock', ctx, read)
}

test('examples/pull-request.yml: the run job reads; publish has what the caller grants, no id-token', async () => {
  const call = await resolveCall(await loadWorkflow('examples/pull-request.yml'), 'airlock', ctx)
  expect(call.permissions.run).toEqual({ contents: 'read', actions: 'read' })
  expect(call.permissions.publish).toEqual({
    contents: 'read',
    'pull-requests': 'write',
    statuses: 'write',
    checks: 'write',
    actions: 'read'
  })
  expect(call.permissions.publish['id-token']).toBeUndefined()
  // The progress job writes check runs only: without statuses: write it cannot set the gate.
  expect(call.permissions.progress).toEqual({ checks: 'write', actions: 'read' })
  expect(call.permissions.progress.statuses).toBeUndefined()
})

test('a caller that grants id-token: write and attestations: write lets publish sign; the run job never gets an id-token', async () => {
  const call = await agentRun({
    contents: 'read',
    'pull-requests': 'write',
    statuses: 'write',
    checks: 'write',
    actions: 'read',
    'id-token': 'write',
    attestations: 'write'
  })
  expect(call.permissions.publish).toMatchObject({ 'id-token': 'write', attestations: 'write' })
  expect(call.permissions.run).toEqual({ contents: 'read', actions: 'read' })
})

test('a nested job asking for more than the caller grants is the startup error GitHub reports', async () => {
  await expect(
    agentRun({ 'pull-requests': 'write', statuses: 'write', checks: 'write', actions: 'read' })
  ).rejects.toThrow(
    /the nested job 'run' is requesting 'contents: read', but is only allowed 'contents: none'/
  )
  // A caller that grants no checks: write fails at startup on the progress job.
  await expect(
    agentRun({ contents: 'read', 'pull-requests': 'write', statuses: 'write' })
  ).rejects.toThrow(
    /the nested job 'progress' is requesting 'checks: write', but is only allowed 'checks: none'/
  )
})
