// The Kubernetes backend against the stand-in API server, which validates every request against
// Kubernetes' schemas and runs the pods on the local Docker engine.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { Writable } from 'node:stream'
import { KubeStandIn } from '../../../__fixtures__/kube-stand-in.js'
import { ConfigurationError } from '../../../src/errors.js'
import { LABELS } from '../../../src/plan.js'
import { KubernetesRuntime, loadKubeConfig } from '../../../src/sandbox/kubernetes/index.js'
import type { ContainerSpec, RunOptions } from '../../../src/sandbox/types.js'
import { BUSYBOX, imageId, uniqueRunId } from '../../support/run.js'

const PINNED = `airlock-local/busybox@${imageId(BUSYBOX)}`

let standIn: KubeStandIn
let runtime: KubernetesRuntime
const dirs: string[] = []

beforeAll(async () => {
  standIn = new KubeStandIn({ runtimeClasses: { gvisor: 'runsc' } })
  await standIn.start()
  runtime = new KubernetesRuntime(loadKubeConfig(standIn.kubeconfig()), {
    namespace: standIn.namespace,
    copySizeBytes: 64 * 1024 * 1024
  })
})

afterAll(async () => {
  await standIn.stop()
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
})

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-kube-'))
  fs.chmodSync(d, 0o755)
  dirs.push(d)
  return d
}

class Collect extends Writable {
  text = ''
  _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.text += chunk.toString('utf8')
    done()
  }
}

function phase(runId: string, command: string, over: Partial<ContainerSpec> = {}): ContainerSpec {
  return {
    name: `airlock-${runId}-agent`,
    image: PINNED,
    command: ['/bin/sh', '-c', command],
    user: '1000:1000',
    workdir: '/workspace',
    env: ['HOME=/tmp', 'AIRLOCK=1'],
    labels: { [LABELS.managed]: 'true', [LABELS.runId]: runId, [LABELS.phase]: 'agent' },
    network: null,
    limits: { memoryBytes: 128 * 1024 * 1024, cpus: 1, pidsLimit: 64 },
    tmpfs: { '/tmp': 16 * 1024 * 1024 },
    mounts: [],
    ...over
  }
}

function options(out: Writable, over: Partial<RunOptions> = {}): RunOptions {
  return { timeoutMs: 60_000, graceMs: 1000, stdout: out, stderr: out, ...over }
}

test('a phase runs as a pod: the workspace goes in and comes back, the output and exit code too', async () => {
  const runId = uniqueRunId('k8s')
  await runtime.preflight('runc')
  const ws = tmp()
  fs.writeFileSync(path.join(ws, 'a.txt'), 'before\n')
  const task = path.join(tmp(), 'task.md')
  fs.writeFileSync(task, 'the task\n')
  const out = new Collect()
  const result = await runtime.runPhase(
    phase(runId, 'cat /airlock/task.md; cat a.txt; echo after > b.txt; rm a.txt; id -u; exit 3', {
      mounts: [
        { source: ws, target: '/workspace', readOnly: false },
        { source: task, target: '/airlock/task.md', readOnly: true }
      ]
    }),
    options(out)
  )
  expect(result.error).toBeUndefined()
  expect(result.exitCode).toBe(3)
  expect(out.text).toBe('the task\nbefore\n1000\n')
  expect(fs.readdirSync(ws).sort()).toEqual(['b.txt'])
  expect(fs.readFileSync(path.join(ws, 'b.txt'), 'utf8')).toBe('after\n')
  expect(standIn.refused).toEqual([])
  expect(standIn.podNames()).toEqual([])
  expect(await runtime.cleanup(runId)).toEqual({ containers: 0, networks: 1, volumes: 0 })
}, 120_000)

test('a RuntimeClass the cluster does not have is refused, with no fallback', async () => {
  await expect(runtime.preflight('kata')).rejects.toThrow(ConfigurationError)
  await expect(runtime.preflight('kata')).rejects.toThrow(/no RuntimeClass "kata".*does not fall back/)
})
