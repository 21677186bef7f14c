// network: allowlist on the Kubernetes backend, through the stand-in: the egress proxy runs as a
// pod (its script copied in, its configuration on its standard input), the agent pod reaches it by
// name through its policy, and the proxy reaches the upstream (a stub this test started) through
// the policy of its upstream side.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import type Docker from 'dockerode'
import { KubeStandIn } from '../../../__fixtures__/kube-stand-in.js'
import { getInputs } from '../../../src/inputs.js'
import { LOCAL_EVENT } from '../../../src/event.js'
import { MemoryLogger } from '../../../src/log.js'
import { runPipeline } from '../../../src/pipeline/run.js'
import { planRun } from '../../../src/plan.js'
import { KubernetesRuntime, loadKubeConfig } from '../../../src/sandbox/kubernetes/index.js'
import { BUSYBOX, docker, imageId, makeWorkspace, uniqueRunId } from '../../support/run.js'
import { testHost } from '../../support/host.js'

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..')
const net = uniqueRunId('kegress')
let stub: Docker.Container
let stubIp = ''
let standIn: KubeStandIn

beforeAll(async () => {
  await docker.createNetwork({ Name: net, Internal: true })
  stub = await docker.createContainer({
    Image: BUSYBOX,
    Cmd: [
      'sh',
      '-c',
      'mkdir -p /tmp/www && echo hello-upstream > /tmp/www/hello.txt && exec httpd -f -p 8080 -h /tmp/www'
    ],
    HostConfig: { NetworkMode: net }
  })
  await stub.start()
  stubIp = (await stub.inspect()).NetworkSettings.Networks[net].IPAddress
  standIn = new KubeStandIn({ outside: net })
  await standIn.start()
}, 120_000)

afterAll(async () => {
  await standIn.stop()
  await stub.remove({ force: true })
  await docker
    .getNetwork(net)
    .remove()
    .catch(() => undefined)
})

test('the agent pod reaches an allowed upstream only through the proxy pod', async () => {
  const ws = makeWorkspace()
  const runId = uniqueRunId('kegress')
  const raw: Record<string, string> = {
    path: 'repo',
    image: `airlock-local/busybox@${imageId(BUSYBOX)}`,
    'agent-command': `wget -q -O- http://api.test:8080/hello.txt; nc -w 3 ${stubIp} 8080 </dev/null && echo DIRECT-REACHED || echo DIRECT-REFUSED`,
    network: 'allowlist',
    'allow-hosts': 'api.test:8080',
    'host-map': `api.test=${stubIp}`,
    'proxy-image': `airlock-local/node@${imageId('airlock-local/node:18')}`,
    'output-dir': 'out',
    'timeout-minutes': '2',
    'grace-seconds': '2',
    memory: '256m',
    cpus: '1',
    'run-id': runId,
    engine: 'kubernetes'
  }
  const inputs = getInputs((n) => raw[n], {
    workspace: ws,
    environment: {},
    hostUid: process.getuid?.() ?? 1000,
    event: LOCAL_EVENT,
    hostCpus: os.cpus().length,
    defaultRunId: runId
  })
  const plan = planRun(inputs)
  const log = new MemoryLogger()
  const runtime = new KubernetesRuntime(loadKubeConfig(standIn.kubeconfig()), {
    namespace: standIn.namespace,
    copySizeBytes: 64 * 1024 * 1024
  })
  try {
    const result = await runPipeline(
      plan,
      { task: 'fetch', env: [] },
      { runtime, log, toolEnv: testHost.toolEnv, proxyScript: path.join(ROOT, 'dist', 'proxy.cjs') }
    )
    expect(`${result.report.outcome}: ${result.report.outcomeReason}`).toMatch(/^success/)
    const agentLog = fs.readFileSync(path.join(plan.outputDir, 'logs', 'agent.log'), 'utf8')
    expect(agentLog).toContain('hello-upstream')
    // Around the proxy, straight to the upstream's address: no route.
    expect(agentLog).toContain('DIRECT-REFUSED')
    expect(agentLog).not.toContain('DIRECT-REACHED')
    const egress = fs.readFileSync(path.join(plan.outputDir, 'egress.jsonl'), 'utf8')
    expect(egress).toMatch(/"allowed":true/)
    // Only the tiers' RuntimeClasses the run asked about and the stand-in does not have.
    expect(standIn.refused.filter((r) => !/^404 runtimeclasses\.node\.k8s\.io/.test(r))).toEqual([])
    expect(standIn.podNames()).toEqual([])
  } finally {
    fs.rmSync(ws, { recursive: true, force: true })
  }
}, 240_000)
