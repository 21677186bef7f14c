// gVisor with `network: allowlist` against the real daemon. The daemon has two gVisor entries (as
// scripts/ensure-docker.sh registers them): `runsc` without network, and `runsc-net` whose sandbox
// joins the network namespace Docker made for the container. An allowlisted run under gVisor gets
// the second one, and its agent reaches the egress proxy and nothing else: the allowlisted stub
// upstream (through the proxy) answers, a host not on the list is denied by the proxy, and direct
// connections to the stubs' own network fail. Every server is one this test starts, on an internal
// network of its own.
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import Docker from 'dockerode'
import { getInputs } from '../../src/inputs.js'
import { MemoryLogger } from '../../src/log.js'
import { runPipeline } from '../../src/pipeline/run.js'
import { planRun, secretsOf } from '../../src/plan.js'
import { DockerRuntime } from '../../src/sandbox/docker/index.js'
import type { Report } from '../../src/report/report.js'
import { LOCAL_EVENT } from '../../src/event.js'
import {
  FIXTURES,
  buildProxy,
  hostAddresses,
  hostListener,
  imageId,
  leftovers,
  makeCerts,
  startStubs,
  uniqueId,
  type StubNet
} from '../egress/helpers.js'
import { testHost } from '../support/host.js'

const docker = new Docker()
let tmp: string
let certs: string
let proxyScript: string
let stubs: StubNet
let nodeImage: string
let listener: Awaited<ReturnType<typeof hostListener>>
let hostIps: string[]

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-gvisor-net-'))
  fs.chmodSync(tmp, 0o755)
  certs = path.join(tmp, 'certs')
  makeCerts(certs)
  proxyScript = await buildProxy(tmp)
  nodeImage = imageId('airlock-local/node:18')
  stubs = await startStubs(docker, certs, { internal: true })
  // A listener of the test's own on the host: the agent must not reach it on any host address.
  listener = await hostListener()
  hostIps = [...new Set([...hostAddresses(), stubs.gateway].filter((a) => a !== ''))]
}, 120_000)

afterAll(async () => {
  listener?.close()
  await stubs?.remove()
  fs.rmSync(tmp, { recursive: true, force: true })
}, 60_000)

/** The agent: what the sandbox's kernel is, and what it can reach, as one JSON line. */
const PROBE = `
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
const t = JSON.parse(fs.readFileSync('targets.json', 'utf8'))
const proxy = new URL(process.env.HTTP_PROXY)
const viaProxy = (url) => new Promise((resolve) => {
  const req = http.request({ host: proxy.hostname, port: proxy.port, method: 'GET', path: url, timeout: 8000 })
  req.on('response', (res) => {
    let body = ''
    res.on('data', (d) => (body += d))
    res.on('end', () => resolve(res.statusCode === 200 ? body : 'status ' + res.statusCode + ' ' + (res.headers['x-airlock-denied'] || '')))
  })
  req.on('timeout', () => { req.destroy(); resolve('timeout') })
  req.on('error', (e) => resolve('error ' + (e.code || e.message)))
  req.end()
})
const direct = (host, port) => new Promise((resolve) => {
  const s = net.connect({ host, port, timeout: 3000 })
  s.on('connect', () => { s.destroy(); resolve('connected') })
  s.on('timeout', () => { s.destroy(); resolve('timeout') })
  s.on('error', (e) => resolve('error ' + (e.code || e.message)))
})
// Side by side: each refused connection waits for its timeout.
const [allowed, denied, proxyPort, directUpstream, directCanary, host] = await Promise.all([
  viaProxy('http://api.test:8080/hello'),
  viaProxy('http://canary.test:8080/hello'),
  direct(proxy.hostname, Number(proxy.port)),
  direct(t.upstreamIp, 8080),
  direct(t.canaryIp, 8080),
  Promise.all(t.hostIps.map((ip) => direct(ip, t.hostPort)))
])
const kernel = fs.readFileSync('/proc/version', 'utf8').trim()
const out = { kernel, allowed, denied, proxyPort, directUpstream, directCanary, host }
console.log('GVPROBE ' + JSON.stringify(out))
`

interface Probe {
  kernel: string
  allowed: string
  denied: string
  proxyPort: string
  directUpstream: string
  directCanary: string
  host: string[]
}

const gitEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'T',
  GIT_AUTHOR_EMAIL: 't@example.invalid',
  GIT_COMMITTER_NAME: 'T',
  GIT_COMMITTER_EMAIL: 't@example.invalid'
}

function workspace(): string {
  const ws = fs.mkdtempSync(path.join(tmp, 'ws-'))
  const repo = path.join(ws, 'repo')
  fs.mkdirSync(repo)
  fs.writeFileSync(path.join(repo, 'probe.mjs'), PROBE)
  fs.writeFileSync(
    path.join(repo, 'targets.json'),
    JSON.stringify({
      upstreamIp: stubs.upstream.ip,
      canaryIp: stubs.canary.ip,
      hostIps,
      hostPort: listener.port
    })
  )
  fs.copyFileSync(path.join(FIXTURES, 'Dockerfile'), path.join(ws, 'Dockerfile'))
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-q', '-m', 'p']
  ])
    execFileSync('git', args, { cwd: repo, env: gitEnv })
  return ws
}

async function run(
  overrides: Record<string, string>
): Promise<{ report: Report; probe: Probe; runId: string }> {
  const ws = workspace()
  const runId = uniqueId('gvnet')
  const raw: Record<string, string> = {
    path: 'repo',
    dockerfile: 'Dockerfile',
    'build-args': `BASE=${nodeImage}`,
    'agent-command': 'node probe.mjs',
    network: 'allowlist',
    'allow-hosts': 'api.test:8080',
    'host-map': `api.test=${stubs.upstream.ip}`,
    'proxy-image': nodeImage,
    'proxy-network': stubs.network,
    'output-dir': 'out',
    'timeout-minutes': '2',
    'grace-seconds': '2',
    memory: '512m',
    cpus: '1',
    'run-id': runId,
    ...overrides
  }
  const inputs = getInputs((n) => raw[n], {
    workspace: ws,
    environment: {},
    hostUid: process.getuid?.() ?? 1000,
    event: LOCAL_EVENT,
    hostCpus: os.cpus().length,
    defaultRunId: runId
  })
  const result = await runPipeline(
    planRun(inputs),
    { ...secretsOf(inputs), task: 'probe' },
    {
      runtime: new DockerRuntime(testHost, docker),
      log: new MemoryLogger(),
      toolEnv: testHost.toolEnv,
      proxyScript,
      tempRoot: tmp
    }
  )
  const out = path.join(ws, 'out')
  const logFile = path.join(out, 'logs', 'agent.log')
  const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : ''
  const line = log.split('\n').find((l) => l.startsWith('GVPROBE '))
  if (line === undefined)
    throw new Error(
      `no probe line; outcome ${result.report.outcome}: ${result.report.outcomeReason}\n${log.slice(0, 3000)}`
    )
  return {
    report: result.report,
    probe: JSON.parse(line.slice('GVPROBE '.length)) as Probe,
    runId
  }
}

describe('gVisor with network: allowlist', () => {
  const hostKernel = fs.readFileSync('/proc/version', 'utf8').trim()
  type Run = Awaited<ReturnType<typeof run>>
  let auto: Run
  let named: Run

  // The two runs go side by side: each spends most of its time starting gVisor sandboxes.
  beforeAll(async () => {
    ;[auto, named] = await Promise.all([run({ isolation: 'auto' }), run({ runtime: 'runsc' })])
  }, 180_000)

  test('isolation auto: the agent runs on gVisor (runsc-net) and reaches only the proxy', async () => {
    const { report, probe, runId } = auto
    expect(report.outcome).toBe('success')
    expect(report.isolation).toMatchObject({ tier: 'runsc', runtime: 'runsc-net' })
    expect(report.isolation?.reasons.join('; ')).toMatch(/network \(allowlist\)/)
    // What the engine applied, read back from the container.
    expect(report.sandbox.applied?.runtime).toBe('runsc-net')
    // gVisor's own kernel answered, not the host's.
    expect(probe.kernel).not.toBe(hostKernel)
    // The allowlisted upstream answers through the proxy; a host not on the list is denied by it.
    expect(probe.allowed).toBe('UPSTREAM-OK')
    expect(probe.denied).toBe('status 403 not-allowlisted')
    expect(probe.proxyPort).toBe('connected')
    // Nothing else on the stubs' network (the proxy's upstream side) is reachable directly.
    expect(probe.directUpstream).not.toBe('connected')
    expect(probe.directCanary).not.toBe('connected')
    // Nor the host, on any of its addresses.
    expect(probe.host).toHaveLength(hostIps.length)
    expect(probe.host).not.toContain('connected')
    expect(listener.hits()).toBe(0)
    // The canary saw nothing but the test's own /seen polls.
    const seen = await stubs.seen('canary')
    expect(seen.paths.filter((p) => !p.endsWith(' /seen'))).toEqual([])
    expect((await leftovers(docker, runId)).length).toBe(0)
  })

  test('runtime runsc named directly with allowlist: served by runsc-net too', () => {
    const { report, probe } = named
    expect(report.outcome).toBe('success')
    expect(report.sandbox.runtime).toBe('runsc-net')
    expect(report.sandbox.applied?.runtime).toBe('runsc-net')
    expect(probe.kernel).not.toBe(hostKernel)
    expect(probe.allowed).toBe('UPSTREAM-OK')
    expect(probe.denied).toBe('status 403 not-allowlisted')
    expect(probe.directCanary).not.toBe('connected')
  })
})
