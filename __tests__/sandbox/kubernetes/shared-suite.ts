// The tests that run the same against the stand-in API server and against a real cluster
// (cluster.int.test.ts): a phase with its workspace, the hostile agent's probes, and the run's
// network: a pod that joins no network of the run cannot reach a sidecar; one that joins its
// network can (the control).
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { Writable } from 'node:stream'
import { LABELS } from '../../../src/labels.js'
import type { KubernetesRuntime } from '../../../src/sandbox/kubernetes/index.js'
import type { ContainerSpec, RunOptions } from '../../../src/sandbox/types.js'

export interface SuiteTarget {
  runtime: () => KubernetesRuntime
  /** A pinned image with busybox (sh, tar, sleep, nc, httpd) the cluster can pull. */
  image: string
  /** The OCI runtime of the tier (runc, runsc → RuntimeClass gvisor, ...). */
  ociRuntime: string
}

export class Collect extends Writable {
  text = ''
  _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.text += chunk.toString('utf8')
    done()
  }
}

let counter = 0
export function runIdOf(prefix: string): string {
  counter++
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`
}

export function phaseSpec(
  target: SuiteTarget,
  runId: string,
  command: string,
  over: Partial<ContainerSpec> = {}
): ContainerSpec {
  return {
    name: `airlock-${runId}-agent`,
    image: target.image,
    command: ['/bin/sh', '-c', command],
    user: '1000:1000',
    workdir: '/workspace',
    env: ['HOME=/tmp', 'AIRLOCK=1'],
    labels: { [LABELS.managed]: 'true', [LABELS.runId]: runId, [LABELS.phase]: 'agent' },
    network: null,
    runtime: target.ociRuntime,
    limits: { memoryBytes: 128 * 1024 * 1024, cpus: 1, pidsLimit: 64 },
    tmpfs: { '/tmp': 16 * 1024 * 1024 },
    mounts: [],
    ...over
  }
}

export function runOptions(out: Writable, over: Partial<RunOptions> = {}): RunOptions {
  return { timeoutMs: 120_000, graceMs: 1000, stdout: out, stderr: out, ...over }
}

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-kube-'))
  fs.chmodSync(d, 0o755)
  return d
}

export function sharedSuite(target: SuiteTarget): void {
  test('preflight: the API server, the namespace, the RuntimeClass, an enforcing network plugin', async () => {
    await target.runtime().preflight(target.ociRuntime)
  }, 60_000)

  test('a phase: the workspace in and back, the output and exit code', async () => {
    const runtime = target.runtime()
    const runId = runIdOf('kshared')
    const ws = tmp()
    fs.writeFileSync(path.join(ws, 'a.txt'), 'before\n')
    const out = new Collect()
    try {
      const result = await runtime.runPhase(
        phaseSpec(target, runId, 'cat a.txt; echo after > b.txt; rm a.txt; exit 3', {
          mounts: [{ source: ws, target: '/workspace', readOnly: false }]
        }),
        runOptions(out)
      )
      expect(result.error).toBeUndefined()
      expect(result.exitCode).toBe(3)
      expect(out.text).toBe('before\n')
      expect(fs.readdirSync(ws)).toEqual(['b.txt'])
    } finally {
      await runtime.cleanup(runId)
      fs.rmSync(ws, { recursive: true, force: true })
    }
  }, 180_000)

  test('the hostile agent: no token, no write outside the workspace and /tmp; the network only by policy', async () => {
    const runtime = target.runtime()
    const runId = runIdOf('kshared')
    const labels = { [LABELS.managed]: 'true', [LABELS.runId]: runId }
    const netName = `airlock-${runId}-svc`
    const net = await runtime.createNetwork({ name: netName, labels, internal: true })
    const listener = await runtime.startSidecar({
      ...phaseSpec(target, runId, 'exec httpd -f -p 8080 -h /'),
      name: `airlock-${runId}-listener`,
      workdir: '/',
      labels: { ...labels, [LABELS.phase]: 'services-tests' },
      network: { name: netName, aliases: ['listener'] }
    })
    listener.stdout.resume()
    listener.stderr.resume()
    try {
      const ip = await listener.address(netName)
      expect(ip).toBeDefined()
      const probe = (to: string): string =>
        [
          'test -e /var/run/secrets/kubernetes.io/serviceaccount/token && echo TOKEN',
          'touch /etc/x 2>/dev/null && echo WROTE-ETC',
          'touch /x 2>/dev/null && echo WROTE-ROOT',
          'touch /tmp/ok && echo TMP-OK',
          `nc -w 3 ${to} 8080 </dev/null && echo REACHED`,
          'true'
        ].join('; ')
      const outside = new Collect()
      const r1 = await runtime.runPhase(
        phaseSpec(target, runId, probe(ip ?? '')),
        runOptions(outside)
      )
      expect(r1.error).toBeUndefined()
      expect(outside.text).toContain('TMP-OK')
      expect(outside.text).not.toMatch(/TOKEN|WROTE|REACHED/)
      // The control: a pod of the run on the sidecar's network reaches it, by its name.
      const inside = new Collect()
      const r2 = await runtime.runPhase(
        phaseSpec(target, runId, probe('listener'), {
          name: `airlock-${runId}-tests`,
          network: { name: netName }
        }),
        runOptions(inside)
      )
      expect(r2.error).toBeUndefined()
      expect(inside.text).toContain('REACHED')
      expect(inside.text).not.toMatch(/TOKEN|WROTE/)
    } finally {
      await listener.stop(1000)
      await net.remove()
      await runtime.cleanup(runId)
    }
  }, 240_000)
}
