// A second implementation of the Pod API runs the generated pod: `podman kube play` (Debian's
// podman). podman sets its containers' nofile/nproc limits to values above the machine's hard
// limits, which needs CAP_SYS_RESOURCE; lowered below them (containers.conf default_ulimits,
// given through CONTAINERS_CONF) the containers start. Without podman on PATH the test says NOT
// RUN (skipped, never passed) outside CI, and fails in CI.
import { execFileSync, spawnSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { podManifest } from '../../../src/sandbox/kubernetes/manifests.js'
import { podViolations } from '../../../src/sandbox/kubernetes/hardening.js'
import { LABELS } from '../../../src/labels.js'
import { BUSYBOX } from '../../support/run.js'

const podman = spawnSync('podman', ['--version']).status === 0

if (!podman && process.env.CI === 'true') {
  // CI installs podman (scripts/ensure-test-tools.sh): its absence there is a failure, not a skip.
  test('podman kube play: podman is installed', () => {
    throw new Error('podman is not installed: run bash scripts/ensure-test-tools.sh')
  })
} else if (!podman) {
  const why = 'NOT RUN: podman is not installed (apt-get install podman catatonit)'
  process.stderr.write(`kubernetes podman tier: ${why}\n`)
  test.skip(`podman kube play: ${why}`, () => undefined)
} else {
  test('the generated agent pod runs through podman kube play, hardened', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-podman-'))
    const conf = path.join(dir, 'containers.conf')
    fs.writeFileSync(
      conf,
      '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n'
    )
    const env = { ...process.env, CONTAINERS_CONF: conf }
    const p = (args: string[], input?: Buffer): string =>
      execFileSync('podman', args, {
        env,
        ...(input ? { input } : {}),
        maxBuffer: 512 * 1024 * 1024
      }).toString('utf8')
    p(['load'], execFileSync('docker', ['save', BUSYBOX], { maxBuffer: 512 * 1024 * 1024 }))
    const digest = p([
      'images',
      '--digests',
      '--format',
      '{{.Digest}}',
      `localhost/${BUSYBOX}`
    ]).trim()
    const name = `airlock-podman-${process.pid}`
    const pod = podManifest(
      {
        name,
        image: `localhost/${BUSYBOX.split(':')[0]}@${digest}`,
        command: [
          '/bin/sh',
          '-c',
          'id -u; touch /x 2>/dev/null && echo WROTE-ROOT; test -e /var/run/secrets/kubernetes.io/serviceaccount/token && echo TOKEN; echo done'
        ],
        user: '1000:1000',
        workdir: '/',
        env: ['AIRLOCK=1'],
        labels: { [LABELS.managed]: 'true', [LABELS.runId]: name },
        network: null,
        limits: { memoryBytes: 64 * 1024 * 1024, cpus: 1, pidsLimit: 64 },
        tmpfs: { '/tmp': 1024 * 1024 },
        mounts: []
      },
      {
        namespace: 'default',
        runtimeClassName: null,
        deadlineSeconds: 60,
        terminationGraceSeconds: 1,
        copySizeBytes: 1024 * 1024,
        hostAliases: []
      },
      []
    )
    expect(podViolations(pod)).toEqual([])
    const file = path.join(dir, 'pod.json')
    fs.writeFileSync(file, JSON.stringify(pod))
    try {
      p(['kube', 'play', file])
      const main = `${name}-main`
      for (let i = 0; i < 100; i++) {
        if (p(['inspect', main, '--format', '{{.State.Status}}']).trim() === 'exited') break
        execFileSync('sleep', ['0.2'])
      }
      const logs = p(['logs', main])
      expect(logs).toContain('1000\n')
      expect(logs).toContain('done')
      expect(logs).not.toMatch(/WROTE|TOKEN/)
      const host = JSON.parse(p(['inspect', main, '--format', '{{json .HostConfig}}'])) as {
        ReadonlyRootfs: boolean
        SecurityOpt: string[]
        Memory: number
        CapAdd: string[] | null
      }
      expect(host.ReadonlyRootfs).toBe(true)
      expect(host.SecurityOpt).toContain('no-new-privileges')
      expect(host.Memory).toBe(64 * 1024 * 1024)
      expect(host.CapAdd ?? []).toEqual([])
    } finally {
      spawnSync('podman', ['kube', 'down', file], { env })
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)
}
