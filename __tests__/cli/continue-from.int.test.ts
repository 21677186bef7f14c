// `airlock run --continue-from`: a follow-up on this machine, with the real pipeline and engine.
// The earlier run's output folder is checked against its provenance.json; on the same commit its
// patch is in the workspace before the agent starts (the new diff holds both changes); after the
// patch was committed, the run starts from the new head and says so; the agent's task quotes the
// earlier task and answer.
import * as fs from 'node:fs'
import * as path from 'node:path'
import { buildDist, cliSync } from '../support/cli.js'
import { git, makeWorkspace } from '../support/run.js'

beforeAll(() => buildDist())

let ws: string
afterEach(() => fs.rmSync(ws, { recursive: true, force: true }))

const common = [
  '--path',
  'repo',
  '--dockerfile',
  'agent/Dockerfile',
  '--memory',
  '256m',
  '--cpus',
  '1',
  '--timeout-minutes',
  '2'
]

function run(args: string[]): { status: number | null; stderr: string } {
  const r = cliSync(['run', ...common, ...args], ws)
  return { status: r.status, stderr: r.stderr.toString() }
}

const read = (f: string): string => fs.readFileSync(path.join(ws, f), 'utf8')
type Report = {
  outcome: string
  continuation?: { runId: string; carried: boolean; note: string }
}
const report = (dir: string): Report => JSON.parse(read(`${dir}/report.json`)) as Report

it('carries the earlier patch on the same commit, starts from the head once it was committed, and refuses a changed folder', () => {
  ws = makeWorkspace({ 'src/greet.txt': 'Hello\n' })
  const first = run([
    '--output-dir',
    'out1',
    '--run-id',
    'first-1',
    '--task',
    'fix the greeting',
    '--agent-command',
    "echo 'Hello, world' > src/greet.txt; echo 'Greeting fixed.' > /airlock/out/summary.md"
  ])
  expect([first.status, first.stderr]).toEqual([0, expect.any(String)])
  expect(read('out1/diff.patch')).toContain('+Hello, world')
  // A local run: no pull request, so no approval on one; its next step is local.
  expect(JSON.parse(read('out1/report.json'))).toMatchObject({ local: true })
  expect(read('out1/comment.md')).toMatch(
    /^\*\*Next step:\*\* a local run has no pull request and no gate: .*`git apply` it on your branch\.$/m
  )
  expect(read('out1/comment.md')).not.toContain('on this pull request')

  // The follow-up on the same commit: the earlier change is there when the agent starts.
  const second = run([
    '--output-dir',
    'out2',
    '--continue-from',
    'out1',
    '--task',
    'also add a changelog',
    '--agent-command',
    'grep -q "Hello, world" src/greet.txt && echo "- greeting fixed" > CHANGELOG.md; cp /airlock/task.md SEEN-TASK.md'
  ])
  expect([second.status, second.stderr]).toEqual([0, expect.any(String)])
  const diff = read('out2/diff.patch')
  expect(diff).toContain('+Hello, world')
  expect(diff).toContain('+- greeting fixed')
  const task = read('out2/task.md')
  expect(task.split('\n')[0]).toBe('also add a changelog')
  expect(task).toContain('```text\nfix the greeting\n```')
  expect(task).toContain('```text\nGreeting fixed.\n```')
  expect(diff).toContain('+```text')
  expect(report('out2').continuation).toMatchObject({ runId: 'first-1', carried: true })
  expect(read('out2/comment.md')).toContain('**Continues:** run <code>first-1</code>')

  // The earlier patch applied as a commit: the head moved, the run starts from it.
  git(path.join(ws, 'repo'), 'apply', path.join(ws, 'out1/diff.patch'))
  git(path.join(ws, 'repo'), 'commit', '-q', '-am', 'apply the agent patch')
  const third = run([
    '--output-dir',
    'out3',
    '--continue-from',
    'out1',
    '--task',
    'also add a changelog',
    '--agent-command',
    'echo "- greeting fixed" > CHANGELOG.md'
  ])
  expect([third.status, third.stderr]).toEqual([0, expect.any(String)])
  expect(report('out3').continuation).toMatchObject({ carried: false })
  expect(report('out3').continuation?.note).toMatch(/the head moved from/)
  expect(read('out3/diff.patch')).not.toContain('src/greet.txt')

  // A changed byte in the earlier folder: refused before anything runs, with the reason.
  fs.appendFileSync(path.join(ws, 'out1/diff.patch'), '+sneaky\n')
  const tampered = run([
    '--output-dir',
    'out4',
    '--continue-from',
    'out1',
    '--task',
    'x',
    '--agent-command',
    'true'
  ])
  expect(tampered.status).not.toBe(0)
  expect(tampered.stderr).toMatch(
    /cannot continue the earlier run: the evidence does not match its provenance\.json: diff\.patch: changed/
  )
  expect(fs.existsSync(path.join(ws, 'out4/report.json'))).toBe(false)
}, 300_000)

it('isolation: auto weighs the carried patch: an earlier change to package.json chooses gVisor although the head changes no dependency', () => {
  ws = makeWorkspace({ 'package.json': '{"name":"demo","version":"1.0.0"}\n' })
  const first = run([
    '--output-dir',
    'out1',
    '--run-id',
    'first-deps',
    '--task',
    'add a dependency',
    '--agent-command',
    `echo '{"name":"demo","version":"1.0.0","dependencies":{"left-pad":"1.3.0"}}' > package.json`
  ])
  expect([first.status, first.stderr]).toEqual([0, expect.any(String)])
  // The head is main itself: compared with main, the head changes no dependency.
  const follow = run([
    '--output-dir',
    'out2',
    '--continue-from',
    'out1',
    '--isolation',
    'auto',
    '--policy-base',
    'main',
    '--task',
    'go on',
    '--agent-command',
    'true'
  ])
  expect([follow.status, follow.stderr]).toEqual([0, expect.any(String)])
  const r = JSON.parse(read('out2/report.json')) as {
    continuation: { carried: boolean }
    isolation: { tier: string; reasons: string[] }
  }
  expect(r.continuation.carried).toBe(true)
  expect(r.isolation.tier).toBe('runsc')
  expect(r.isolation.reasons.join('; ')).toMatch(/touches dependencies.*package\.json/)
}, 300_000)
