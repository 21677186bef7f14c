// The same demo run through both backends: Docker, and Kubernetes (the stand-in API server that
// runs the pods on the same engine). The evidence is the same: outcome, diff hash, tests.
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { KubeStandIn } from '../../../__fixtures__/kube-stand-in.js'
import { DockerRuntime } from '../../../src/sandbox/docker/index.js'
import { KubernetesRuntime, loadKubeConfig } from '../../../src/sandbox/kubernetes/index.js'
import { git } from '../../support/git.js'
import { imageId, runAirlock } from '../../support/run.js'
import type { TestRun } from '../../support/run.js'
import { testHost } from '../../support/host.js'

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..')
const TEST_COMMAND =
  'node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination=test-results.xml'

let standIn: KubeStandIn
let pinned = ''
const dirs: string[] = []

beforeAll(async () => {
  const id = execFileSync('docker', [
    'build',
    '-q',
    '--build-arg',
    `BASE=${imageId('airlock-local/node:18')}`,
    '-f',
    path.join(ROOT, 'fixtures/demo/Dockerfile'),
    path.join(ROOT, 'fixtures/demo')
  ])
    .toString()
    .trim()
  pinned = `airlock-demo/agent@${id}`
  standIn = new KubeStandIn()
  await standIn.start()
}, 300_000)

afterAll(async () => {
  await standIn.stop()
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
})

function demoWorkspace(): string {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-kdemo-'))
  dirs.push(ws)
  fs.cpSync(path.join(ROOT, 'fixtures/demo/repo'), path.join(ws, 'repo'), { recursive: true })
  fs.copyFileSync(path.join(ROOT, 'fixtures/demo/task.md'), path.join(ws, 'task.md'))
  fs.mkdirSync(path.join(ws, 'image'))
  fs.cpSync(path.join(ROOT, 'fixtures/demo/agent'), path.join(ws, 'image/agent'), {
    recursive: true
  })
  fs.copyFileSync(path.join(ROOT, 'fixtures/demo/Dockerfile'), path.join(ws, 'image/Dockerfile'))
  git(path.join(ws, 'repo'), 'init', '-q', '-b', 'main')
  git(path.join(ws, 'repo'), 'add', '-A')
  git(path.join(ws, 'repo'), 'commit', '-q', '-m', 'demo')
  return ws
}

/**
 * The Docker backend builds the demo's image as `npm run demo` does; the cluster cannot build, so
 * it gets that same Dockerfile's image, built beforehand and pinned by digest.
 */
function demo(
  ws: string,
  runtime: DockerRuntime | KubernetesRuntime,
  image?: string
): Promise<TestRun> {
  return runAirlock(
    ws,
    {
      ...(image !== undefined
        ? { dockerfile: '', image }
        : {
            dockerfile: 'image/Dockerfile',
            'build-context': 'image',
            'build-args': `BASE=${imageId('airlock-local/node:18')}`
          }),
      task: 'task.md',
      'agent-command': 'sh /opt/demo-agent/fix.sh',
      'test-command': TEST_COMMAND,
      'test-reports': 'test-results.xml',
      'compare-base': 'true',
      memory: '512m'
    },
    { runtime }
  )
}

test('the demo through the Kubernetes backend gives the Docker backend evidence', async () => {
  const viaDocker = await demo(demoWorkspace(), new DockerRuntime(testHost))
  const kube = new KubernetesRuntime(loadKubeConfig(standIn.kubeconfig()), {
    namespace: standIn.namespace,
    copySizeBytes: 256 * 1024 * 1024
  })
  const viaKube = await demo(demoWorkspace(), kube, pinned)
  expect(`${viaDocker.report.outcome}: ${viaDocker.report.outcomeReason}`).toMatch(/^success/)
  expect(`${viaKube.report.outcome}: ${viaKube.report.outcomeReason}`).toMatch(/^success/)
  expect(viaKube.report.outcome).toBe(viaDocker.report.outcome)
  expect(viaKube.report.diff.sha256).toBe(viaDocker.report.diff.sha256)
  expect(viaKube.report.diff.files).toEqual(viaDocker.report.diff.files)
  expect(viaKube.report.tests.summary).toEqual(viaDocker.report.tests.summary)
  expect(viaKube.report.tests.summary.failed).toBe(0)
  expect(viaKube.report.agent.exitCode).toBe(0)
  expect(standIn.refused).toEqual([])
  // Every pod went through the API server, and none is left.
  expect(
    standIn.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods')).length
  ).toBeGreaterThanOrEqual(3)
  expect(standIn.podNames()).toEqual([])
}, 600_000)
