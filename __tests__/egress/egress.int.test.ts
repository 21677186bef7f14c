// network: allowlist against the real daemon. Every server is one these tests start: two stub
// servers in containers on a network of the test's own, and a listener on the host.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import Docker from 'dockerode'
import { getInputs } from '../../src/inputs.js'
import { MemoryLogger } from '../../src/log.js'
import { runPipeline } from '../../src/pipeline/run.js'
import { planRun, secretsOf } from '../../src/plan.js'
import { DockerRuntime } from '../../src/sandbox/docker/index.js'
import { startEgress } from '../../src/egress/session.js'
import { parseHostRule } from '../../src/egress/host-rules.js'
import type { Report } from '../../src/report/report.js'
import {
  FIXTURES,
  hostAddresses,
  hostListener,
  imageId,
  leftovers,
  readTree,
  uniqueId,
  egressWorld
} from './helpers.js'
import { GIT_TEST_ENV } from '../support/git.js'
import { LOCAL_EVENT } from '../../src/event.js'
import { testHost } from '../support/host.js'

const docker = new Docker()
const SECRET = `canary-secret-${randomBytes(16).toString('hex')}`
let nodeImage: string

const world = egressWorld('airlock-egress-test-')

beforeAll(async () => {
  nodeImage = imageId('airlock-local/node:18')
}, 120_000)

/** A workspace with a git repository holding the probe, and the Dockerfile next to it. */
function workspace(extra: Record<string, string>): string {
  const ws = fs.mkdtempSync(path.join(world.tmp, 'ws-'))
  const repo = path.join(ws, 'repo')
  fs.mkdirSync(repo)
  for (const f of ['probe.mjs', 'icmp-echo.pl'])
    fs.copyFileSync(path.join(FIXTURES, f), path.join(repo, f))
  fs.copyFileSync(path.join(world.certs, 'ca.crt'), path.join(repo, 'ca.crt'))
  for (const [f, text] of Object.entries(extra)) fs.writeFileSync(path.join(repo, f), text)
  fs.copyFileSync(path.join(FIXTURES, 'Dockerfile'), path.join(ws, 'Dockerfile'))
  fs.copyFileSync(path.join(world.certs, 'ca.crt'), path.join(ws, 'upstream-ca.pem'))
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-q', '-m', 'probe']
  ])
    execFileSync('git', args, { cwd: repo, env: GIT_TEST_ENV })
  return ws
}

function inputsFor(ws: string, runId: string, overrides: Record<string, string> = {}) {
  const raw: Record<string, string> = {
    path: 'repo',
    dockerfile: 'Dockerfile',
    'build-args': `BASE=${nodeImage}`,
    'agent-command': 'node probe.mjs',
    network: 'allowlist',
    'allow-hosts': 'api.test:8443\napi.test:8080\ninternal.test:8443',
    'host-map': `api.test=${world.stubs.upstream.ip}`,
    credentials: 'STUBAPI=https://api.test:8443|EGTEST_CANARY_SECRET|x-api-key',
    'upstream-ca': 'upstream-ca.pem',
    'proxy-image': nodeImage,
    'proxy-network': world.stubs.network,
    'output-dir': 'out',
    'timeout-minutes': '3',
    'grace-seconds': '2',
    memory: '512m',
    cpus: '1',
    'run-id': runId,
    ...overrides
  }
  return getInputs((n) => raw[n], {
    workspace: ws,
    environment: { EGTEST_CANARY_SECRET: SECRET },
    hostUid: process.getuid?.() ?? 1000,
    event: LOCAL_EVENT,
    hostCpus: os.cpus().length,
    defaultRunId: runId
  })
}

async function run(
  ws: string,
  runId: string,
  overrides: Record<string, string> = {},
  signal?: AbortSignal
) {
  const inputs = inputsFor(ws, runId, overrides)
  const log = new MemoryLogger()
  const result = await runPipeline(
    planRun(inputs),
    { ...secretsOf(inputs), task: 'probe the network' },
    {
      runtime: new DockerRuntime(testHost, docker),
      log,
      toolEnv: testHost.toolEnv,
      proxyScript: world.proxyScript,
      tempRoot: world.tmp,
      ...(signal ? { signal } : {})
    }
  )
  return { result, log, out: path.join(ws, 'out') }
}

interface ProbeResult {
  proxyAddress: string
  positiveControl: { icmpProxy: string; tcpProxy: string | null }
  allowedTls: string
  allowedHttp: string
  canaryByName: string
  canaryByIp: string
  canaryHttpByIp: string
  privateName: string
  credential: { status: number; sse: boolean } | string
  placeholderKey: string
  direct: Record<string, string>
  dockerSocket: string[]
  secrets: { hits: string[]; files: number }
}

function probeOf(out: string): ProbeResult {
  const logFile = path.join(out, 'logs', 'agent.log')
  if (!fs.existsSync(logFile)) {
    throw new Error(
      `no agent log; report: ${fs.readFileSync(path.join(out, 'report.json'), 'utf8').slice(0, 3000)}`
    )
  }
  const log = fs.readFileSync(logFile, 'utf8')
  const line = log.split('\n').find((l) => l.startsWith('PROBE '))
  if (!line) throw new Error(`no PROBE line in the agent log:\n${log.slice(0, 4000)}`)
  return JSON.parse(line.slice(6)) as ProbeResult
}

describe('network: allowlist', () => {
  let probe: ProbeResult
  let report: Report
  let out: string
  let listener: Awaited<ReturnType<typeof hostListener>>
  let runId: string
  let logLines: string[]
  let hostIps: string[]

  beforeAll(async () => {
    listener = await hostListener()
    hostIps = [...new Set([...hostAddresses(), world.stubs.gateway].filter((a) => a !== ''))]
    runId = uniqueId('egress-ok')
    const ws = workspace({
      'probe-targets.json': JSON.stringify({
        upstreamIp: world.stubs.upstream.ip,
        canaryIp: world.stubs.canary.ip,
        canaryContainer: world.stubs.canary.name,
        hostIps,
        hostPort: listener.port,
        caFile: 'ca.crt',
        icmpScript: 'icmp-echo.pl'
      })
    })
    const r = await run(ws, runId)
    out = r.out
    report = r.result.report
    logLines = r.log.lines
    probe = probeOf(out)
  }, 240_000)

  afterAll(() => listener?.close())

  test('the run completes and the proxy was up', () => {
    expect(report.outcome).toBe('success')
    expect(probe.proxyAddress).toMatch(/^resolved /)
    // Positive controls: the probe's own methods work against the one reachable peer.
    expect(probe.positiveControl.icmpProxy).toBe('reply')
    expect(probe.positiveControl.tcpProxy).toBe('connected')
  })

  test('an allowlisted name pinned with host-map works over CONNECT+TLS and plain HTTP', () => {
    expect(probe.allowedTls).toBe('UPSTREAM-OK')
    expect(probe.allowedHttp).toBe('UPSTREAM-OK')
  })

  test('the canary is refused by name, by IP literal, and a private address without host-map', () => {
    expect(probe.canaryByName).toBe('status 403 not-allowlisted')
    expect(probe.canaryByIp).toBe('status 403 ip-literal')
    expect(probe.canaryHttpByIp).toBe('status 403 ip-literal')
    expect(probe.privateName).toBe('status 403 private-address')
  })

  test('every attempt is in egress.jsonl with its verdict, and in the report', () => {
    const events = fs
      .readFileSync(path.join(out, 'egress.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    const find = (host: string, allowed: boolean) =>
      events.filter((e) => e.host === host && e.allowed === allowed)
    expect(find('canary.test', false)[0]).toMatchObject({ reason: 'not-allowlisted', port: 8443 })
    expect(find(world.stubs.canary.ip, false).map((e) => e.reason)).toEqual([
      'ip-literal',
      'ip-literal'
    ])
    expect(find('internal.test', false)[0]).toMatchObject({ reason: 'private-address' })
    const ok = find('api.test', true)
    expect(ok.map((e) => e.kind).sort()).toEqual(['connect', 'credential', 'http'])
    for (const e of ok) {
      expect(e.bytesDown as number).toBeGreaterThan(0)
      // CONNECT counts the tunnel's bytes; HTTP requests their bodies (a GET has none).
      if (e.kind !== 'http') expect(e.bytesUp as number).toBeGreaterThan(0)
      expect(typeof e.time).toBe('string')
    }
    expect(report.egress.allowed).toBe(3)
    expect(report.egress.denied).toBe(4)
    expect(report.egress.deniedHosts).toEqual(
      [
        `${world.stubs.canary.ip}:8080`,
        `${world.stubs.canary.ip}:8443`,
        'canary.test:8443',
        'internal.test:8443'
      ].sort()
    )
    const comment = fs.readFileSync(path.join(out, 'comment.md'), 'utf8')
    expect(comment).toContain('3 allowed, 4 denied')
    expect(comment).toMatch(/allow-hosts: \|\n {2}canary\.test:8443\n {2}internal\.test:8443/)
    // The ledger: what each allowed host carried, what was never used, each denial's fix.
    const ledger = report.egress.ledger!
    const bytesOf = (kind: string, port: number) =>
      ok
        .filter((e) => e.kind === kind && e.port === port)
        .reduce((n, e) => n + (e.bytesUp as number) + (e.bytesDown as number), 0)
    expect(ledger.used).toEqual(
      expect.arrayContaining([
        { host: 'api.test:8443', requests: 1, bytes: bytesOf('connect', 8443) },
        {
          host: 'api.test:8443',
          requests: 1,
          bytes: bytesOf('credential', 8443),
          route: 'STUBAPI'
        },
        { host: 'api.test:8080', requests: 1, bytes: bytesOf('http', 8080) }
      ])
    )
    expect(ledger.used).toHaveLength(3)
    expect(ledger.unused).toEqual(['internal.test:8443'])
    expect(ledger.denied).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          host: 'canary.test:8443',
          reason: 'not-allowlisted',
          fix: 'add `canary.test:8443` to allow-hosts if the agent needs it'
        }),
        expect.objectContaining({ host: 'internal.test:8443', reason: 'private-address' }),
        expect.objectContaining({ host: `${world.stubs.canary.ip}:8443`, reason: 'ip-literal' })
      ])
    )
    expect(comment).toContain(
      '<details><summary>Egress ledger: 3 host(s) used · 1 allowed but unused'
    )
    expect(comment).toContain('**Allowed, never used** (candidates to drop): `internal.test:8443`')
  })

  test('with the proxy variables unset: no TCP, UDP, ICMP or DNS to anything, no host listener, no Docker API', async () => {
    for (const [what, result] of Object.entries(probe.direct)) {
      if (what.startsWith('lookup'))
        expect([what, result]).toEqual([what, expect.stringMatching(/^(error|timeout)/)])
      else if (what.startsWith('icmp'))
        expect([what, result]).toEqual([what, expect.stringMatching(/^(timeout|error)/)])
      else if (what.startsWith('udp') || what.startsWith('dns'))
        expect([what, result]).toEqual([what, expect.stringMatching(/^(no answer|error)/)])
      else expect([what, result]).toEqual([what, expect.stringMatching(/^(error|timeout)/)])
    }
    // every target was tried
    expect(Object.keys(probe.direct)).toEqual(
      expect.arrayContaining([
        `tcp upstream ${world.stubs.upstream.ip}:8443`,
        `tcp canary ${world.stubs.canary.ip}:8080`,
        ...hostIps.map((ip) => `tcp host ${ip}:${listener.port}`),
        ...hostIps.map((ip) => `tcp docker-api ${ip}:2375`),
        'dns query to the test resolver',
        'udp canary'
      ])
    )
    expect(listener.hits()).toBe(0)
    expect(probe.dockerSocket).toEqual([])
    const canary = await world.stubs.seen('canary')
    expect(canary.udp).toBe(0)
    // Nothing but the test's own /seen calls ever reached the canary.
    expect(canary.paths.filter((p) => p !== 'GET /seen')).toEqual([])
    const upstream = await world.stubs.seen('upstream')
    expect(upstream.dns).toBe(0)
  })

  test('the credential reaches the upstream, never the sandbox nor any output', async () => {
    expect(probe.credential).toEqual({ status: 200, sse: true })
    expect(probe.placeholderKey).toBe('airlock-placeholder-key')
    const upstream = await world.stubs.seen('upstream')
    expect(upstream.auth).toEqual([`x-api-key: ${SECRET}`])
    expect(probe.secrets.files).toBeGreaterThan(100)
    expect(probe.secrets.hits).toEqual([])
    const files = readTree(out)
    expect(files.map((f) => path.basename(f.file))).toEqual(
      expect.arrayContaining(['report.json', 'egress.jsonl', 'transcript.jsonl', 'comment.md'])
    )
    for (const f of files) expect([f.file, f.text.includes(SECRET)]).toEqual([f.file, false])
    expect(logLines.join('\n')).not.toContain(SECRET)
  })

  test('the transcript records the exchange (headers redacted, stream reassembled) and the report its usage', () => {
    const records = fs
      .readFileSync(path.join(out, 'transcript.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>) // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(records).toHaveLength(1)
    const r = records[0]
    expect(r.route).toBe('STUBAPI')
    expect(r.request.headers['x-api-key']).toBe('[REDACTED]')
    expect(r.parsed).toMatchObject({
      model: 'claude-stub-1',
      inputTokens: 120,
      outputTokens: 30,
      streamed: true
    })
    expect(r.parsed.toolCalls[0].name).toBe('Write')
    expect(JSON.parse(r.parsed.toolCalls[0].input)).toEqual({
      file_path: '/workspace/GREETING.md',
      content: 'Hello from the stub model.\n'
    })
    expect(report.egress.transcript).toMatchObject({
      requests: 1,
      models: ['claude-stub-1'],
      tokens: { input: 120, output: 30 }
    })
    expect(report.egress.transcript?.requestSha256s[0]).toMatch(/^[0-9a-f]{64}$/)
    expect(report.cost.tokens).toMatchObject({ model: 'claude-stub-1', input: 120, output: 30 })
  })

  test('nothing of the run is left', async () => {
    expect(await leftovers(docker, runId)).toEqual([])
  })
})

describe('egress proxy container and networks', () => {
  test('hardened proxy; secret only on its stdin; internal network without a host address; all removed on stop', async () => {
    const runId = uniqueId('egress-side')
    const session = await startEgress(new DockerRuntime(testHost, docker), {
      runId,
      labels: { 'dev.airlock.managed': 'true', 'dev.airlock.run-id': runId },
      proxyImage: nodeImage,
      proxyScript: world.proxyScript,
      allow: [parseHostRule('api.test:8443')],
      hostMap: [{ host: 'api.test', address: world.stubs.upstream.ip }],
      credentials: [
        {
          name: 'STUBAPI',
          upstream: 'https://api.test:8443',
          secretEnv: 'X',
          header: { kind: 'x-api-key' },
          baseUrlEnv: 'STUBAPI_BASE_URL',
          keyEnv: 'STUBAPI_API_KEY',
          secret: SECRET
        }
      ]
    })
    try {
      const proxy = await docker.getContainer(`airlock-${runId}-proxy`).inspect()
      expect(JSON.stringify(proxy)).not.toContain(SECRET)
      expect(proxy.Config.User).toBe('65534:65534')
      expect(proxy.HostConfig.ReadonlyRootfs).toBe(true)
      expect(proxy.HostConfig.CapDrop).toEqual(['ALL'])
      expect(proxy.HostConfig.SecurityOpt).toEqual(['no-new-privileges:true'])
      const internal = await docker.getNetwork(session.network).inspect()
      expect(internal.Internal).toBe(true)
      expect(internal.Options?.['com.docker.network.bridge.inhibit_ipv4']).toBe('true')
      // The proxy listens only on its internal address, not on the upstream side.
      const upstreamIp = proxy.NetworkSettings.Networks[`airlock-${runId}-upstream`].IPAddress
      const reached = await fetch(`http://${upstreamIp}:3128/`).then(
        () => 'answered',
        () => 'refused'
      )
      expect(reached).toBe('refused')
      expect(session.env).toEqual(
        expect.arrayContaining([
          'HTTPS_PROXY=http://airlock-proxy:3128',
          'STUBAPI_BASE_URL=http://airlock-proxy:3128/STUBAPI',
          'STUBAPI_API_KEY=airlock-placeholder-key'
        ])
      )
    } finally {
      await session.stop()
    }
    expect(await leftovers(docker, runId)).toEqual([])
  }, 60_000)
})

describe('leftovers', () => {
  test('none after the agent fails', async () => {
    const runId = uniqueId('egress-fail')
    const ws = workspace({})
    const { result, out } = await run(ws, runId, { 'agent-command': 'exit 3' })
    expect(result.report.outcome).toBe('agent-failed')
    expect(fs.existsSync(path.join(out, 'egress.jsonl'))).toBe(true)
    expect(await leftovers(docker, runId)).toEqual([])
  }, 240_000)

  test('none when the run ends before its agent (the proxy started alongside the image build is stopped)', async () => {
    const runId = uniqueId('egress-nobuild')
    const ws = workspace({})
    // The image step fails while the proxy starts beside it.
    fs.writeFileSync(path.join(ws, 'Dockerfile'), `FROM ${nodeImage}\nRUN exit 7\n`)
    const { result, out } = await run(ws, runId)
    expect(result.report.outcome).not.toBe('success')
    expect(result.report.agent.exitCode).toBeNull()
    expect(result.report.cost.steps?.proxyStartMs).toBeGreaterThan(0)
    // Its evidence (nothing asked) is written, and nothing of it is left.
    expect(fs.existsSync(path.join(out, 'egress.jsonl'))).toBe(true)
    expect(result.report.egress.allowed + result.report.egress.denied).toBe(0)
    expect(await leftovers(docker, runId)).toEqual([])
  }, 240_000)

  test('none when the proxy cannot start (an image without node): a clear infrastructure error', async () => {
    const runId = uniqueId('egress-noproxy')
    const ws = workspace({})
    const { result } = await run(ws, runId, { 'proxy-image': imageId('airlock-local/busybox:1') })
    expect(result.report.outcome).toBe('infrastructure-error')
    expect(result.report.outcomeReason).toMatch(
      /egress proxy did not start[\s\S]*exec node failed[\s\S]*node 18 or later/
    )
    // The agent never ran without its proxy.
    expect(result.report.agent.exitCode).toBeNull()
    expect(await leftovers(docker, runId)).toEqual([])
  }, 240_000)

  test('none after cancellation while the agent runs behind the proxy', async () => {
    const runId = uniqueId('egress-cancel')
    const ws = workspace({})
    const controller = new AbortController()
    const filters = JSON.stringify({
      label: [`dev.airlock.run-id=${runId}`, 'dev.airlock.phase=agent']
    })
    const watcher = (async () => {
      for (let i = 0; i < 600 && !controller.signal.aborted; i++) {
        const running = await docker.listContainers({ filters })
        if (running.length > 0) {
          controller.abort('SIGTERM')
          return
        }
        await new Promise((r) => setTimeout(r, 200))
      }
    })()
    const { result } = await run(ws, runId, { 'agent-command': 'sleep 120' }, controller.signal)
    await watcher
    expect(result.report.outcome).toBe('cancelled')
    expect(await leftovers(docker, runId)).toEqual([])
  }, 240_000)
})
