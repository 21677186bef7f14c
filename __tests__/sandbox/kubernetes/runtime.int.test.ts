// The Kubernetes backend against the stand-in API server, which validates every request against
// Kubernetes' schemas and runs the pods on the local Docker engine.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { Writable } from 'node:stream'
import { KubeStandIn } from '../../../__fixtures__/kube-stand-in.js'
import { ConfigurationError } from '../../../src/errors.js'
import { LABELS } from '../../../src/labels.js'
import { KubernetesRuntime, loadKubeConfig } from '../../../src/sandbox/kubernetes/index.js'
import type { ContainerSpec, RunOptions } from '../../../src/sandbox/types.js'
import type Docker from 'dockerode'
import { BUSYBOX, docker, imageId, uniqueRunId } from '../../support/run.js'
import { sharedSuite } from './shared-suite.js'
import {
  deleteRunObjects,
  inClusterEndpoint
} from '../../../src/sandbox/kubernetes/post-cleanup.js'

const PINNED = `airlock-local/busybox@${imageId(BUSYBOX)}`

let standIn: KubeStandIn
let runtime: KubernetesRuntime
const dirs: string[] = []
// A listener the hostile agent tries to reach: on a network this test made, never anything else.
const netName = uniqueRunId('k8s-listen')
let listener: Docker.Container
let listenerIp = ''

beforeAll(async () => {
  await docker.createNetwork({ Name: netName, Internal: true })
  listener = await docker.createContainer({
    Image: BUSYBOX,
    Cmd: ['httpd', '-f', '-p', '8080', '-h', '/'],
    User: '1000:1000',
    HostConfig: { NetworkMode: netName, CapDrop: ['ALL'] }
  })
  await listener.start()
  listenerIp = (await listener.inspect()).NetworkSettings.Networks[netName].IPAddress
  standIn = new KubeStandIn({ runtimeClasses: { gvisor: 'runsc' } })
  await standIn.start()
  runtime = new KubernetesRuntime(loadKubeConfig(standIn.kubeconfig()), {
    namespace: standIn.namespace,
    copySizeBytes: 64 * 1024 * 1024
  })
})

afterAll(async () => {
  await listener?.remove({ force: true })
  await docker
    .getNetwork(netName)
    .remove()
    .catch(() => undefined)
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
  await expect(runtime.preflight('kata')).rejects.toThrow(
    /no RuntimeClass "kata".*does not fall back/
  )
})

test('the deadline stops the pod and says timed out', async () => {
  const runId = uniqueRunId('k8s')
  const out = new Collect()
  const result = await runtime.runPhase(
    phase(runId, 'echo started; sleep 60'),
    options(out, { timeoutMs: 3000 })
  )
  expect(result.timedOut).toBe(true)
  // A timeout, not a fault of the engine (the outcome is timed-out, as with Docker).
  expect(result.error).toBeUndefined()
  expect(result.exitCode === null || result.exitCode === 137 || result.exitCode === 143).toBe(true)
  expect(out.text).toContain('started')
  expect(standIn.podNames()).toEqual([])
  await runtime.cleanup(runId)
}, 60_000)

test('the pod deadline (activeDeadlineSeconds) is a timeout too', async () => {
  const runId = uniqueRunId('k8s')
  // The pod's own deadline is the timeout plus the grace: here it comes before the backend's timer
  // would (which is longer), as when the API server is slow to answer.
  const result = await runtime.runPhase(
    phase(runId, 'sleep 60'),
    options(new Collect(), { timeoutMs: 1000, graceMs: 1000 })
  )
  expect(result.timedOut).toBe(true)
  expect(result.error).toBeUndefined()
  await runtime.cleanup(runId)
}, 60_000)

test('an allocation beyond the memory limit is reported as OOMKilled', async () => {
  const runId = uniqueRunId('k8s')
  const result = await runtime.runPhase(
    phase(runId, 'awk \'BEGIN { s = "x"; while (1) s = s s }\'', {
      limits: { memoryBytes: 48 * 1024 * 1024, cpus: 1, pidsLimit: 64 }
    }),
    options(new Collect())
  )
  expect(result.oomKilled).toBe(true)
  expect(result.exitCode).toBe(137)
  await runtime.cleanup(runId)
}, 60_000)

test('an evicted pod is an error of the phase, not an exit of the agent', async () => {
  const runId = uniqueRunId('k8s')
  const spec = phase(runId, 'echo up; sleep 60')
  const pending = runtime.runPhase(spec, options(new Collect()))
  const name = spec.name
  for (let i = 0; i < 100 && !standIn.podNames().includes(name); i++)
    await new Promise((r) => setTimeout(r, 100))
  await new Promise((r) => setTimeout(r, 1500))
  await standIn.evict(name)
  const result = await pending
  expect(result.exitCode).toBeNull()
  expect(result.error).toMatch(/evicted/)
  await runtime.cleanup(runId)
}, 60_000)

test('a lost watch is re-established and the phase still ends with its exit code', async () => {
  const runId = uniqueRunId('k8s')
  standIn.loseWatches(3)
  const result = await runtime.runPhase(phase(runId, 'sleep 2; exit 5'), options(new Collect()))
  expect(result.error).toBeUndefined()
  expect(result.exitCode).toBe(5)
  await runtime.cleanup(runId)
}, 60_000)

test('hostile agent: no service-account token, no write outside the workspace and /tmp, no network', async () => {
  const runId = uniqueRunId('k8s')
  const ws = tmp()
  const out = new Collect()
  const probe = [
    'test -e /var/run/secrets/kubernetes.io/serviceaccount/token && echo TOKEN',
    'touch /etc/x 2>/dev/null && echo WROTE-ETC',
    'touch /x 2>/dev/null && echo WROTE-ROOT',
    'touch /tmp/ok && echo TMP-OK',
    'touch /workspace/ok && echo WS-OK',
    `nc -w 2 ${listenerIp} 8080 </dev/null && echo REACHED`,
    'ip -o addr 2>/dev/null | grep -v " lo " | grep -c inet || true'
  ].join('; ')
  const result = await runtime.runPhase(
    phase(runId, probe, { mounts: [{ source: ws, target: '/workspace', readOnly: false }] }),
    options(out)
  )
  expect(result.error).toBeUndefined()
  expect(out.text).not.toContain('TOKEN')
  expect(out.text).not.toContain('WROTE')
  expect(out.text).not.toContain('REACHED')
  expect(out.text).toContain('TMP-OK')
  expect(out.text).toContain('WS-OK')
  await runtime.cleanup(runId)
}, 60_000)

test('the listener of the isolation test is reachable from its own network (the control)', async () => {
  const c = await docker.createContainer({
    Image: BUSYBOX,
    Cmd: ['sh', '-c', `nc -w 2 ${listenerIp} 8080 </dev/null && echo REACHED`],
    HostConfig: { NetworkMode: netName }
  })
  await c.start()
  await c.wait()
  const logs = (await c.logs({ stdout: true, stderr: true })).toString('utf8')
  await c.remove({ force: true })
  expect(logs).toContain('REACHED')
}, 60_000)

test('a cluster whose network plugin does not enforce NetworkPolicy is refused (fail closed)', async () => {
  const open = new KubeStandIn({ enforceNetworkPolicy: false })
  await open.start()
  try {
    const rt = new KubernetesRuntime(loadKubeConfig(open.kubeconfig()), {
      namespace: open.namespace,
      copySizeBytes: 1024 * 1024
    })
    await expect(rt.preflight('runc')).rejects.toThrow(
      /no network plugin that enforces NetworkPolicy/
    )
  } finally {
    await open.stop()
  }
})

test('a namespace that does not exist is a configuration error naming the input', async () => {
  const rt = new KubernetesRuntime(loadKubeConfig(standIn.kubeconfig()), {
    namespace: 'elsewhere',
    copySizeBytes: 1024 * 1024
  })
  await expect(rt.preflight('runc')).rejects.toThrow(/namespace "elsewhere" does not exist/)
})

describe('the tests shared with the real-cluster tier, on the stand-in', () => {
  sharedSuite({ runtime: () => runtime, image: PINNED, ociRuntime: 'runc' })
})

test("the post step's small client deletes what a killed run left, by its label", async () => {
  const runId = uniqueRunId('k8s')
  const labels = { [LABELS.managed]: 'true', [LABELS.runId]: runId }
  const net = `airlock-${runId}-svc`
  await runtime.createNetwork({ name: net, labels, internal: true })
  const sidecar = await runtime.startSidecar({
    ...phase(runId, 'exec sleep 60'),
    name: `airlock-${runId}-db`,
    workdir: '/',
    network: { name: net, aliases: ['db'] }
  })
  sidecar.stdout.resume()
  sidecar.stderr.resume()
  // The run is killed here: nothing of it is removed by the run itself.
  const removed = await deleteRunObjects(
    { server: standIn.url, token: 'post' },
    standIn.namespace,
    runId
  )
  expect(removed).toEqual({ pods: 1, services: 1, networkpolicies: 2 })
  for (let i = 0; i < 100 && standIn.podNames().length > 0; i++)
    await new Promise((r) => setTimeout(r, 100))
  expect(standIn.podNames()).toEqual([])
  expect(
    await deleteRunObjects({ server: standIn.url, token: 'post' }, standIn.namespace, runId)
  ).toEqual({
    pods: 0,
    services: 0,
    networkpolicies: 0
  })
}, 60_000)

test('in a pod, the post step reads the API server, token and CA of its service account', () => {
  const files: Record<string, string> = {
    '/var/run/secrets/kubernetes.io/serviceaccount/token': 'tok\n',
    '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt': 'CA'
  }
  const ep = inClusterEndpoint(
    { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '6443' },
    (f) => Buffer.from(files[f])
  )
  expect(ep).toEqual({ server: 'https://10.0.0.1:6443', token: 'tok', ca: Buffer.from('CA') })
  expect(inClusterEndpoint({}, () => Buffer.from(''))).toBeUndefined()
})
