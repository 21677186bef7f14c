// What comes back through the egress proxy, against the real daemon. Every server is one these
// tests start: the stub upstream (a reflecting API, a TLS server for two names) in a container on
// an internal network of the test's own, which is the proxy's upstream network; the clients run
// in containers on the proxy's internal network (or with no network at all).
import { execFileSync } from 'node:child_process'
import { randomBytes, randomInt } from 'node:crypto'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import Docker from 'dockerode'
import { ConfigurationError } from '../../src/errors.js'
import { getInputs } from '../../src/inputs.js'
import { MemoryLogger } from '../../src/log.js'
import { runPipeline } from '../../src/pipeline/run.js'
import { planRun, secretsOf } from '../../src/plan.js'
import { DockerRuntime } from '../../src/sandbox/docker/index.js'
import { startEgress, type EgressCapture, type EgressOptions } from '../../src/egress/session.js'
import { parseCredential } from '../../src/egress/credential-routes.js'
import { parseHostRule } from '../../src/egress/host-rules.js'
import type { ProxyConfig } from '../../src/egress/proxy.js'
import {
  FIXTURES,
  TEST_LABEL,
  imageId,
  leftovers,
  readTree,
  runClient,
  uniqueId,
  egressWorld
} from './helpers.js'
import { GIT_TEST_ENV } from '../support/git.js'
import { LOCAL_EVENT } from '../../src/event.js'
import { testHost } from '../support/host.js'

const docker = new Docker()
// A printable-ASCII key with characters that need care in headers and URLs.
const SECRET = `canary!key-${randomBytes(16).toString('hex')}`
let nodeImage: string
const testId = uniqueId('egret')
const labels = { [TEST_LABEL]: testId }

const world = egressWorld('airlock-egress-return-', { internal: true })

beforeAll(async () => {
  nodeImage = imageId('airlock-local/node:18')
}, 120_000)

/** Every form of the key a careless reader could recover it from. */
function forms(secret: string): string[] {
  return [
    secret,
    encodeURIComponent(secret),
    Buffer.from(secret).toString('base64'),
    Buffer.from(secret).toString('base64url'),
    Buffer.from(secret).toString('hex'),
    Buffer.from(`x-api-key: ${secret}`).toString('base64')
  ]
}

function expectNoSecret(text: string, secret = SECRET): void {
  for (const f of forms(secret)) expect(text).not.toContain(f)
}

function result<T>(stdout: string): T {
  const line = stdout.split('\n').find((l) => l.startsWith('RESULT '))
  if (!line) throw new Error(`no RESULT line:\n${stdout.slice(0, 3000)}`)
  return JSON.parse(line.slice(7)) as T
}

const route = (spec: string, secret = SECRET) => ({ ...parseCredential(spec), secret })

interface Reply {
  status: number
  denied: string | null
  headers: Record<string, string>
  body: string
  error?: string
}

describe('a reflecting upstream, forged headers, scoped routes and SNI', () => {
  let r: {
    reflect: Record<string, Reply>
    forwardedCredential: Reply
    forwardedHttp: Reply
    scope: Record<string, Reply>
    override: Record<string, Reply>
    broken: Reply
    sni: Record<string, string>
  }
  let capture: EgressCapture

  beforeAll(async () => {
    const runId = uniqueId('egret-main')
    const session = await startEgress(new DockerRuntime(testHost, docker), {
      runId,
      labels: { 'dev.airlock.managed': 'true', 'dev.airlock.run-id': runId },
      proxyImage: nodeImage,
      proxyScript: world.proxyScript,
      allow: [parseHostRule('api.test:8443'), parseHostRule('api.test:8080')],
      hostMap: [{ host: 'api.test', address: world.stubs.upstream.ip }],
      credentials: [
        route('STUBAPI=https://api.test:8443|K|x-api-key'),
        route('SCOPED=https://api.test:8443/base|K|x-api-key|allow=POST /v1/messages'),
        // A value the input checks refuse (given straight to the proxy here): the last guard.
        route('BROKEN=https://api.test:8443|K|x-api-key', 'broken\r\nX-Injected: 1')
      ],
      extraCa: fs.readFileSync(path.join(world.certs, 'ca.crt'), 'utf8'),
      upstreamNetwork: world.stubs.network
    })
    try {
      const out = await runClient(docker, {
        network: session.network,
        script: 'attack.mjs',
        env: [...session.env, 'ATTACK=main'],
        files: [{ source: path.join(world.certs, 'ca.crt'), target: '/client/ca.crt' }],
        labels
      })
      r = result(out)
    } finally {
      capture = await session.stop()
    }
    expect(await leftovers(docker, runId)).toEqual([])
  }, 180_000)

  test.each(['header', 'json', 'sse', 'gzip', 'br', 'deflate'])(
    'the key echoed by the upstream (%s) never reaches the agent, in any encoding',
    (kind) => {
      const reply = r.reflect[kind]
      expect(reply.status).toBe(kind === 'sse' ? 200 : 401)
      expectNoSecret(JSON.stringify(reply.headers))
      expectNoSecret(reply.body)
      expect(JSON.stringify(reply)).toContain('***')
      expect(reply.headers['content-encoding']).toBeUndefined()
    }
  )

  test('compressed answers come decoded and readable; streams keep their events', () => {
    const body = JSON.parse(r.reflect.gzip.body) as { error: { message: string } }
    expect(body.error.message).toBe('invalid x-api-key: ***')
    expect(JSON.parse(r.reflect.br.body)).toEqual(JSON.parse(r.reflect.deflate.body))
    expect(r.reflect.sse.body).toContain('event: ping')
    expect(r.reflect.sse.body).toContain('data: {"message":"bad key ***"}')
    expect(r.reflect.sse.body).toContain('event: done')
  })

  test('an encoding the proxy cannot read is refused, not passed through', () => {
    expect(r.reflect.compress.status).toBe(502)
    expect(r.reflect.compress.denied).toBe('unsupported-encoding')
    expectNoSecret(r.reflect.compress.body)
  })

  test('egress.jsonl records each reflection', () => {
    const reflected = capture.events.filter((e) => (e.reflected ?? 0) > 0)
    expect(reflected.length).toBeGreaterThanOrEqual(6)
    expectNoSecret(JSON.stringify(capture.transcript))
  })

  test('Forwarded, X-Forwarded-*, X-Real-IP, Via and Proxy-* never reach the upstream', () => {
    for (const reply of [r.forwardedCredential, r.forwardedHttp]) {
      expect(reply.status).toBe(200)
      const names = Object.keys(JSON.parse(reply.body) as Record<string, string>)
      expect(names).toContain('x-keep')
      for (const n of names) {
        expect(n).not.toMatch(/^(forwarded|via|x-real-ip|x-forwarded-.*|proxy-.*)$/)
      }
    }
  })

  test('a scoped route allows only its methods and path prefixes', () => {
    expect(r.scope.allowed.status).toBe(200)
    expect([r.scope.wrongMethod.status, r.scope.wrongMethod.denied]).toEqual([403, 'route-scope'])
    expect([r.scope.wrongPath.status, r.scope.wrongPath.denied]).toEqual([403, 'route-scope'])
    expect(r.scope.wrongPath.body).toContain('allows only POST /v1/messages')
  })

  test.each([
    'methodOverride',
    'httpMethod',
    'methodOverride2',
    'originalUrl',
    'rewriteUrl',
    'originalMethod',
    'overrideUrl',
    'queryMethod',
    'form'
  ])(
    'a scoped route refuses a method or URL override (%s) before it reaches the upstream',
    (name) => {
      const reply = r.override[name]
      expect([reply.status, reply.denied]).toEqual([403, 'route-scope'])
      expect(reply.body).toContain('override')
    }
  )

  test.each(['dotdot', 'encodedDots', 'encodedSlash', 'doubleSlash', 'baseEscape'])(
    '%s: refused before matching, nothing reaches the upstream',
    (name) => {
      expect([r.scope[name].status, r.scope[name].denied]).toEqual([400, 'bad-path'])
    }
  )

  test('the upstream saw only the allowed paths', async () => {
    const seen = await world.stubs.seen('upstream')
    expect(seen.paths).toContain('POST /base/v1/messages')
    expect(seen.paths.filter((p) => p.includes('..') || /%2e|%2f/i.test(p))).toEqual([])
    expect(seen.paths.filter((p) => p.endsWith(' /hello') && !p.startsWith('GET'))).toEqual([])
  })

  test('an upstream failure comes back with a reason and is logged with its status', () => {
    expect([r.broken.status, r.broken.denied]).toEqual([502, 'upstream-failed'])
    expect(r.broken.body).toMatch(/^airlock: /)
    const e = capture.events.find((x) => x.route === 'BROKEN')
    expect(e).toMatchObject({ allowed: false, reason: 'upstream-failed', status: 502 })
  })

  test('in a CONNECT tunnel the SNI must be the allowed name', () => {
    expect(r.sni.same).toBe('UPSTREAM-OK')
    for (const k of ['other', 'none', 'plain']) expect(r.sni[k]).not.toContain('UPSTREAM-OK')
    const sni = capture.events.filter((e) => e.reason === 'sni-mismatch').map((e) => e.detail)
    expect(sni).toEqual(
      expect.arrayContaining([
        expect.stringContaining('SNI other.test differs'),
        expect.stringContaining('no SNI'),
        expect.stringContaining('not a TLS ClientHello')
      ])
    )
  })
})

describe('the model budget at the proxy', () => {
  type Calls = {
    calls: { status: number; denied: string | null; shouldRetry: string; body: string }[]
  }
  /** The attack client's calls through a proxy with this budget to the stub API; its capture. */
  async function throughBudget(
    name: string,
    budget: EgressOptions['budget'],
    env: string[]
  ): Promise<{ r: Calls; capture: EgressCapture }> {
    const runId = uniqueId(name)
    const session = await startEgress(new DockerRuntime(testHost, docker), {
      runId,
      labels: { 'dev.airlock.managed': 'true', 'dev.airlock.run-id': runId },
      proxyImage: nodeImage,
      proxyScript: world.proxyScript,
      allow: [],
      hostMap: [{ host: 'api.test', address: world.stubs.upstream.ip }],
      credentials: [route('STUBAPI=https://api.test:8443|K|x-api-key')],
      extraCa: fs.readFileSync(path.join(world.certs, 'ca.crt'), 'utf8'),
      upstreamNetwork: world.stubs.network,
      ...(budget ? { budget } : {})
    })
    let r: Calls
    let capture: EgressCapture
    try {
      r = result(
        await runClient(docker, {
          network: session.network,
          script: 'attack.mjs',
          env: [...session.env, 'ATTACK=budget', ...env],
          labels
        })
      )
    } finally {
      capture = await session.stop()
    }
    return { r, capture }
  }

  test('past max-model-tokens the proxy answers 429 with the reason', async () => {
    // Each stub answer reports 120 input + 30 output tokens.
    const { r, capture } = await throughBudget('egret-budget', { maxTokens: 200 }, [])
    expect(r.calls.map((c) => c.status)).toEqual([200, 200, 429])
    expect(r.calls[2]).toMatchObject({ denied: 'budget-exceeded', shouldRetry: 'false' })
    expect(r.calls[2].body).toContain('max-model-tokens (200) reached: 300 token(s) used')
    expect(capture.events.filter((e) => e.reason === 'budget-exceeded')).toHaveLength(1)
  }, 120_000)

  test('past max-cost-usd the proxy answers 429 once the first exchange cost more', async () => {
    // The stub answers 120 input + 30 output tokens: at claude-sonnet-4's $3 / $15 per million
    // the first exchange costs $0.00081, past this budget.
    const { r, capture } = await throughBudget('egret-cost', { maxCostUsd: 0.0005 }, [
      'MODEL=claude-sonnet-4-5-20250929'
    ])
    expect(r.calls.map((c) => c.status)).toEqual([200, 429, 429])
    expect(r.calls[1]).toMatchObject({ denied: 'budget-exceeded', shouldRetry: 'false' })
    expect(r.calls[1].body).toContain('max-cost-usd (0.0005) reached: $0.00081 spent')
    const denials = capture.events.filter((e) => e.reason === 'budget-exceeded')
    expect(denials).toHaveLength(2)
    expect(denials[0].detail).toContain('max-cost-usd')
    expect(capture.transcript).toHaveLength(1)
  }, 120_000)
})

describe('addresses judged by what they embed', () => {
  // Names that resolve (through the proxy's /etc/hosts) to IPv6 forms of the metadata address
  // 169.254.169.254 and of 10.0.0.1. No network at all: only the proxy's verdict is looked at.
  const names: Record<string, string> = {
    'nat64.test': '64:ff9b::a9fe:a9fe',
    'nat64local.test': '64:ff9b:1::a00:1',
    'sixtofour.test': '2002:a9fe:a9fe::1',
    'mapped.test': '::ffff:a9fe:a9fe',
    'teredo.test': '2001:0:a00:1::1'
  }
  test('NAT64, 6to4, Teredo and IPv4-mapped forms of non-public addresses are refused', async () => {
    const dir = fs.mkdtempSync(path.join(world.tmp, 'addr-'))
    fs.chmodSync(dir, 0o755)
    const config: ProxyConfig = {
      listen: { host: '127.0.0.1', port: 3128 },
      allow: Object.keys(names).map((n) => parseHostRule(n)),
      hostMap: [],
      credentials: [],
      selfNames: [],
      maxRecordBytes: 1024
    }
    fs.writeFileSync(path.join(dir, 'proxy-config.json'), JSON.stringify(config), { mode: 0o644 })
    const out = await runClient(docker, {
      network: 'none',
      script: 'attack.mjs',
      env: ['ATTACK=addresses', 'HTTPS_PROXY=http://127.0.0.1:3128', `NAMES=${Object.keys(names)}`],
      files: [
        { source: world.proxyScript, target: '/client/proxy.cjs' },
        { source: path.join(dir, 'proxy-config.json'), target: '/client/proxy-config.json' }
      ],
      extraHosts: Object.entries(names).map(([n, a]) => `${n}:${a}`),
      labels
    })
    const r = result<{
      tunnels: Record<string, string>
      events: { host: string; reason?: string }[]
    }>(out)
    for (const n of Object.keys(names)) {
      expect([n, r.tunnels[n]]).toEqual([n, 'status 403 private-address'])
      expect(r.events.find((e) => e.host === n)?.reason).toBe('private-address')
    }
  }, 120_000)
})

describe('credential values are checked at start', () => {
  const base = {
    path: '.',
    image: `img@sha256:${'a'.repeat(64)}`,
    'agent-command': 'true',
    network: 'allowlist',
    credentials: 'API=https://api.example.com|API_SECRET|x-api-key',
    'proxy-image': `node@sha256:${'b'.repeat(64)}`
  }
  test.each([
    ['a line break', 'sk-value\r\nX-Injected: 1'],
    ['non-ASCII', 'sk-välue-0123456789'],
    ['a NUL', 'sk-value\u0000-0123456789'],
    ['over 1 KiB', 'k'.repeat(1025)],
    ['too short to mask', 'abc']
  ])('%s: a ConfigurationError naming the credential, never echoing the value', (_what, value) => {
    const ws = fs.mkdtempSync(path.join(world.tmp, 'ws-'))
    let error: unknown
    try {
      getInputs((n) => (base as Record<string, string>)[n], {
        workspace: ws,
        environment: { API_SECRET: value },
        hostUid: 1000,
        event: LOCAL_EVENT,
        hostCpus: 2,
        defaultRunId: 'x'
      })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigurationError)
    const message = (error as Error).message
    expect(message).toMatch(/^credentials: API: the value of API_SECRET /)
    expect(message).not.toContain(value.slice(0, 8))
  })
})

// ---------------------------------------------------------------------------------------------
// A whole run: masked everywhere, secret scanning, the budget in the report and the comment.

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const pick = (alphabet: string, n: number): string =>
  Array.from({ length: n }, () => alphabet[randomInt(alphabet.length)]).join('')

describe('a run whose agent leaks what it holds', () => {
  const tokens = {
    ghp: `ghp_${pick(ALNUM, 36)}`,
    aws: `AKIA${pick('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}`,
    slack: `xoxb-${pick('0123456789', 12)}-${pick('0123456789', 13)}-${pick(ALNUM, 24)}`
  }
  let out: string
  let report: Awaited<ReturnType<typeof runPipeline>>['report']
  let logLines: string[]

  beforeAll(async () => {
    const runId = uniqueId('egret-run')
    const ws = fs.mkdtempSync(path.join(world.tmp, 'ws-'))
    const repo = path.join(ws, 'repo')
    fs.mkdirSync(repo)
    fs.copyFileSync(path.join(FIXTURES, 'leaky-agent.mjs'), path.join(repo, 'agent.mjs'))
    fs.writeFileSync(path.join(repo, 'reversed.txt'), SECRET.split('').reverse().join(''))
    fs.writeFileSync(path.join(repo, 'tokens.json'), JSON.stringify(tokens))
    for (const args of [
      ['init', '-q', '-b', 'main'],
      ['add', '-A'],
      ['commit', '-q', '-m', 'leaky']
    ])
      execFileSync('git', args, { cwd: repo, env: GIT_TEST_ENV })
    fs.copyFileSync(path.join(FIXTURES, 'Dockerfile'), path.join(ws, 'Dockerfile'))
    fs.copyFileSync(path.join(world.certs, 'ca.crt'), path.join(ws, 'upstream-ca.pem'))
    const raw: Record<string, string> = {
      path: 'repo',
      dockerfile: 'Dockerfile',
      'build-args': `BASE=${nodeImage}`,
      'agent-command': 'node agent.mjs',
      'test-command': 'true',
      'test-reports': 'report.xml',
      network: 'allowlist',
      'host-map': `api.test=${world.stubs.upstream.ip}`,
      credentials: 'STUBAPI=https://api.test:8443|EGRET_SECRET|x-api-key',
      'upstream-ca': 'upstream-ca.pem',
      'proxy-image': nodeImage,
      'proxy-network': world.stubs.network,
      // The agent's first request (the reflecting endpoint) and one model call; the second is refused.
      'max-model-requests': '2',
      'output-dir': 'out',
      'timeout-minutes': '3',
      'grace-seconds': '2',
      memory: '512m',
      cpus: '1',
      'run-id': runId
    }
    const inputs = getInputs((n) => raw[n], {
      workspace: ws,
      environment: { EGRET_SECRET: SECRET },
      hostUid: process.getuid?.() ?? 1000,
      event: LOCAL_EVENT,
      hostCpus: os.cpus().length,
      defaultRunId: runId
    })
    const log = new MemoryLogger()
    const run = await runPipeline(
      planRun(inputs),
      { ...secretsOf(inputs), task: 'leak' },
      {
        runtime: new DockerRuntime(testHost, docker),
        log,
        toolEnv: testHost.toolEnv,
        proxyScript: world.proxyScript,
        tempRoot: world.tmp
      }
    )
    report = run.report
    logLines = log.lines
    out = path.join(ws, 'out')
    expect(await leftovers(docker, runId)).toEqual([])
  }, 300_000)

  test('the agent got the reflected key masked, and its change is a secret-in-diff violation naming rule and file', () => {
    const agentLog = fs.readFileSync(path.join(out, 'logs', 'agent.log'), 'utf8')
    expect(agentLog).toContain('reflected 401')
    expect(agentLog).toContain('invalid x-api-key: ***')
    expect(report.outcome).toBe('policy-violation')
    const v = report.policy.violations.filter((x) => x.rule === 'secret-in-diff')
    expect(v.map((x) => x.path).sort()).toEqual(
      expect.arrayContaining(['config.js', 'leak.env', 'notes.b64', 'report.xml'])
    )
    const leakEnv = v.filter((x) => x.path === 'leak.env').map((x) => x.detail)
    for (const rule of ['secretlint-rule-github', 'secretlint-rule-aws', 'secretlint-rule-slack'])
      expect(leakEnv.some((d) => d.startsWith(`${rule}:`))).toBe(true)
  })

  test('no credential value or token reaches any output, in any encoding', () => {
    const files = readTree(out)
    expect(files.map((f) => path.relative(out, f.file))).toEqual(
      expect.arrayContaining([
        'comment.md',
        'diff.patch',
        'report.json',
        'tests.json',
        'logs/agent.log'
      ])
    )
    for (const f of files) {
      expectNoSecret(f.text)
      for (const t of Object.values(tokens)) expectNoSecret(f.text, t)
    }
    // The job log too (the live output): the credential and the token shapes.
    const joined = logLines.join('\n')
    expectNoSecret(joined)
    for (const t of Object.values(tokens)) expectNoSecret(joined, t)
  })

  test('the budget was hit: the report and the comment say so, the work is kept', () => {
    expect(report.egress.budget).toEqual({
      maxRequests: 2,
      maxTokens: null,
      maxCostUsd: null,
      hit: 'max-model-requests',
      denied: 1
    })
    expect(report.egress.reflected).toBeGreaterThan(0)
    const comment = fs.readFileSync(path.join(out, 'comment.md'), 'utf8')
    expect(comment).toContain('Model budget reached')
    expect(comment).toContain('max-model-requests: 2')
    expect(comment).toContain('echoed the injected credential')
    expect(report.diff.files.map((f) => f.path)).toContain('config.js')
  })
})
