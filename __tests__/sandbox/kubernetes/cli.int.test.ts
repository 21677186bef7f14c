// `airlock run --engine kubernetes` and `airlock plan --engine kubernetes --json` from the bundled
// CLI against the stand-in API server: the run's evidence, and the plan's manifests being exactly
// the pods the run sent.
import { spawn } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import type { IPod } from 'kubernetes-models/v1'
import { KubeStandIn } from '../../../__fixtures__/kube-stand-in.js'
import { DIST, buildDist } from '../../support/cli.js'
import { BUSYBOX, imageId, makeWorkspace, uniqueRunId } from '../../support/run.js'

let standIn: KubeStandIn
let ws = ''

beforeAll(async () => {
  buildDist()
  standIn = new KubeStandIn()
  await standIn.start()
  ws = makeWorkspace({ 'README.md': 'broken\n' })
}, 300_000)

afterAll(async () => {
  await standIn.stop()
  fs.rmSync(ws, { recursive: true, force: true })
})

function cli(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(DIST, 'cli.js'), ...args], {
      cwd: ws,
      env: { ...process.env, KUBECONFIG: standIn.kubeconfig() },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')))
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')))
    child.on('close', (status) => resolve({ status, stdout, stderr }))
  })
}

test('run and plan with --engine kubernetes', async () => {
  const runId = uniqueRunId('kcli')
  const common = [
    '--engine',
    'kubernetes',
    '--path',
    'repo',
    '--image',
    `airlock-local/busybox@${imageId(BUSYBOX)}`,
    '--agent-command',
    'echo fixed > README.md',
    '--test-command',
    'grep -q fixed README.md',
    '--task',
    'fix the README',
    '--memory',
    '128m',
    '--cpus',
    '1',
    '--run-id',
    runId
  ]
  const planned = await cli(['plan', ...common, '--json'])
  expect(planned.stderr).toBe('')
  expect(planned.status).toBe(0)
  const plan = JSON.parse(planned.stdout) as {
    engine: { name: string; reason: string }
    kubernetes: { namespace: string; manifests: IPod[] }
  }
  expect(plan.engine).toMatchObject({ name: 'kubernetes', reason: 'engine: kubernetes' })
  expect(plan.kubernetes.namespace).toBe(standIn.namespace)

  const run = await cli(['run', ...common, '--output-dir', 'out'])
  expect(run.stderr).toContain('outcome: success')
  expect(run.status).toBe(0)
  const report = JSON.parse(fs.readFileSync(path.join(ws, 'out', 'report.json'), 'utf8')) as {
    outcome: string
    diff: { files: { path: string }[] }
    tests: { exitCode: number | null }
  }
  expect(report.outcome).toBe('success')
  expect(report.diff.files.map((f) => f.path)).toEqual(['README.md'])
  expect(standIn.refused).toEqual([])
  expect(standIn.podNames()).toEqual([])

  // The plan printed the pods the run sent, field for field.
  const sent = standIn.created.filter((p) => p.metadata?.labels?.['dev.airlock.run-id'] === runId)
  const printed = plan.kubernetes.manifests.filter((m) => m.kind === 'Pod')
  expect(sent.map((p) => p.metadata?.name)).toEqual(printed.map((p) => p.metadata?.name))
  for (const [i, p] of printed.entries()) {
    expect(sent[i].spec).toEqual(p.spec)
    expect(sent[i].metadata?.labels).toEqual(p.metadata?.labels)
  }
}, 300_000)
