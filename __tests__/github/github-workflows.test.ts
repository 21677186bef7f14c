import * as fs from 'node:fs'
import { parse } from 'yaml'

/* eslint-disable @typescript-eslint/no-explicit-any -- parsed workflow YAML */
const load = (file: string): any => parse(fs.readFileSync(file, 'utf8'))

describe('approvals run only from workflow files of the default branch', () => {
  test('examples/approve.yml listens to issue_comment and workflow_run, never to reviews directly', () => {
    const wf = load('examples/approve.yml')
    expect(Object.keys(wf.on).sort()).toEqual(['issue_comment', 'workflow_run'])
    expect(wf.on.issue_comment.types).toEqual(['created'])
    expect(wf.on.workflow_run.workflows).toEqual([load('examples/review-relay.yml').name])
  })

  test('the review relay has no permissions and runs nothing but an echo', () => {
    const wf = load('examples/review-relay.yml')
    expect(wf.permissions).toEqual({})
    for (const job of Object.values<any>(wf.jobs)) {
      expect(job.permissions).toEqual({})
      for (const step of job.steps) {
        expect(step.uses).toBeUndefined()
        expect(step.run).toMatch(/^echo "[^"$`]*"\n?$/)
      }
    }
  })

  test('agent-approve.yml acts only on comments and on workflow_run after a review', () => {
    const cond = String(load('.github/workflows/agent-approve.yml').jobs.approve.if)
    expect(cond).not.toContain("pull_request_review' &&")
    expect(cond).toContain("github.event_name == 'issue_comment'")
    expect(cond).toContain("github.event.workflow_run.event == 'pull_request_review'")
  })
})

describe('the fork publisher', () => {
  const wf = load('.github/workflows/agent-publish.yml')
  const steps: any[] = wf.jobs.publish.steps

  test('downloads the finished run’s artifact by run id into $RUNNER_TEMP/untrusted', () => {
    const download = steps.find((s) => String(s.uses).startsWith('actions/download-artifact@'))
    expect(download.with['run-id']).toBe('${{ github.event.workflow_run.id }}')
    expect(download.with.path).toBe('${{ runner.temp }}/untrusted')
    const publish = steps.find((s) => s.with?.mode === 'publish')
    expect(publish.with['output-dir']).toBe('${{ runner.temp }}/untrusted')
  })

  test('checks out nothing but Agent Airlock itself, and runs no script of the pull request', () => {
    for (const s of steps.filter((x) => String(x.uses).startsWith('actions/checkout@'))) {
      expect(s.with.repository).toBe('${{ inputs.airlock-repository || job.workflow_repository }}')
      expect(s.with.ref).toBe('${{ inputs.airlock-ref || job.workflow_sha }}')
      expect(s.with['persist-credentials']).toBe(false)
    }
    expect(steps.filter((s) => s.run !== undefined).map((s) => s.name)).toEqual([
      'Check the commit of Agent Airlock this workflow runs',
      "No evidence from a fork's run - the gate waits for a maintainer's /airlock run",
      "No evidence from this repository's run"
    ])
    expect(wf.jobs.publish.permissions).toEqual({
      actions: 'read',
      'pull-requests': 'write',
      statuses: 'write'
    })
  })
})

describe('the comment trigger example', () => {
  const wf = load('examples/comment-run.yml')
  test('the instructions reach the reusable workflow as an input, never a script; pinned head, base policy, preset, key and budget', () => {
    const text = fs.readFileSync('examples/comment-run.yml', 'utf8')
    const job = wf.jobs.airlock
    expect(job.uses).toMatch(/\/\.github\/workflows\/agent-run\.yml@v1$/)
    expect(job.with).toMatchObject({
      agent: 'claude-code',
      task: "${{ needs.command.outputs.task || '.github/airlock/review-task.md' }}",
      'head-sha': '${{ needs.command.outputs.head-sha }}',
      'policy-base': '${{ needs.command.outputs.base-sha }}',
      'pull-request': '${{ needs.command.outputs.pull-request }}'
    })
    expect(Number(job.with['max-model-requests'])).toBeGreaterThan(0)
    expect(Number(job.with['max-model-tokens'])).toBeGreaterThan(0)
    expect(job.secrets).toEqual({
      'agent-api-key': '${{ secrets.ANTHROPIC_API_KEY }}',
      AIRLOCK_APP_CLIENT_ID: '${{ secrets.AIRLOCK_APP_CLIENT_ID }}',
      AIRLOCK_APP_PRIVATE_KEY: '${{ secrets.AIRLOCK_APP_PRIVATE_KEY }}'
    })
    for (const j of Object.values<any>(wf.jobs))
      for (const st of j.steps ?? []) expect(st.run ?? '').not.toContain('${{')
    expect(text).not.toContain('pull_request_target')
    expect(text).not.toContain('AGENT_API_KEY:')
  })
})
