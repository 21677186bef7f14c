import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { ConfigurationError } from '../../src/errors.js'
import { getInputs } from '../../src/inputs.js'
import { planRun } from '../../src/plan.js'
import { containerSpec } from '../../src/sandbox/spec.js'
import { createOptions } from '../../src/sandbox/docker/create.js'
import {
  checkHost,
  isIpLiteral,
  isNonPublicAddress,
  parseHostMapping,
  parseHostRule,
  splitHostPort
} from '../../src/egress/host-rules.js'
import { parseCredential } from '../../src/egress/credential-routes.js'
import { masker, summarizeEgress } from '../../src/egress/evidence.js'
import { parseExchange, parseSse, summarizeTranscript } from '../../src/egress/transcript.js'
import type { EgressEvent, TranscriptRecord } from '../../src/egress/proxy.js'
import { redactHeaders } from '../../src/egress/proxy/headers.js'
import { renderEgress } from '../../src/report/egress.js'
import type { Report } from '../../src/report/report.js'
import { LOCAL_EVENT } from '../../src/event.js'

const PINNED = `img@sha256:${'a'.repeat(64)}`
const SECRET = 'sk-test-0123456789'

describe('allow-hosts entries', () => {
  test.each([
    ['api.example.com', { host: 'api.example.com', wildcard: false, ports: [443, 80] }],
    ['API.Example.com.', { host: 'api.example.com', wildcard: false, ports: [443, 80] }],
    ['*.example.com', { host: 'example.com', wildcard: true, ports: [443, 80] }],
    ['api.test:8443', { host: 'api.test', wildcard: false, ports: [8443] }]
  ])('%s', (raw, expected) => {
    expect(parseHostRule(raw)).toEqual(expected)
  })

  test.each([
    '1.2.3.4',
    '[::1]',
    '*.com',
    '*',
    'a_b.com',
    'host:0',
    'host:99999',
    '**.x.com',
    'x.*.com'
  ])('refuses %s', (raw) => {
    expect(() => parseHostRule(raw)).toThrow()
  })
})

describe('host-map entries', () => {
  test.each([
    ['api.test=172.18.0.5', { host: 'api.test', address: '172.18.0.5' }],
    ['api.test=172.18.0.5:8443', { host: 'api.test', address: '172.18.0.5', port: 8443 }],
    ['v6.test=[fd00::5]:443', { host: 'v6.test', address: 'fd00::5', port: 443 }]
  ])('%s', (raw, expected) => {
    expect(parseHostMapping(raw)).toEqual(expected)
  })
  test.each(['api.test', '=1.2.3.4', '1.2.3.4=1.2.3.4', 'api.test=name.test', 'api.test=1.2.3'])(
    'refuses %s',
    (raw) => {
      expect(() => parseHostMapping(raw)).toThrow()
    }
  )
})

describe('credentials entries', () => {
  test('defaults the sandbox variables from the name', () => {
    expect(parseCredential('ANTHROPIC=https://api.anthropic.com|ANTHROPIC_KEY|x-api-key')).toEqual({
      name: 'ANTHROPIC',
      upstream: 'https://api.anthropic.com',
      secretEnv: 'ANTHROPIC_KEY',
      header: { kind: 'x-api-key' },
      baseUrlEnv: 'ANTHROPIC_BASE_URL',
      keyEnv: 'ANTHROPIC_API_KEY'
    })
  })
  test('keeps a base path and takes explicit variable names and a custom header', () => {
    expect(
      parseCredential(
        'GEMINI=https://g.example.com/v1beta/|K|header:X-Custom-Key|GOOGLE_GEMINI_BASE_URL|GEMINI_API_KEY'
      )
    ).toMatchObject({
      upstream: 'https://g.example.com/v1beta',
      header: { kind: 'header', name: 'x-custom-key' },
      baseUrlEnv: 'GOOGLE_GEMINI_BASE_URL',
      keyEnv: 'GEMINI_API_KEY'
    })
  })
  test.each([
    'anthropic=https://a.example.com|K|bearer',
    'A=http://a.example.com|K|bearer',
    'A=https://1.2.3.4|K|bearer',
    'A=https://user:pw@a.example.com|K|bearer',
    'A=https://a.example.com|K|cookie',
    'A=https://a.example.com|K',
    'A=https://a.example.com?x=1|K|bearer',
    'A=https://a.example.com|bad-name|bearer'
  ])('refuses %s', (raw) => {
    expect(() => parseCredential(raw)).toThrow()
  })
})

describe('the name check before resolving', () => {
  const rules = ['api.test:8443', '*.example.com', 'exact.org'].map(parseHostRule)
  const maps = [parseHostMapping('api.test=172.18.0.5')]
  test.each([
    ['api.test', 8443, 'ok'],
    ['api.test', 443, 'not-allowlisted'],
    ['a.b.example.com', 443, 'ok'],
    ['example.com', 443, 'not-allowlisted'],
    ['evil-example.com', 443, 'not-allowlisted'],
    ['exact.org', 80, 'ok'],
    ['sub.exact.org', 443, 'not-allowlisted'],
    ['127.0.0.1', 443, 'ip-literal'],
    ['[::1]', 443, 'ip-literal'],
    ['2130706433', 443, 'ip-literal'],
    ['0x7f.1', 443, 'ip-literal'],
    ['bad_name.example.com', 443, 'bad-request']
  ])('%s:%s → %s', (host, port, expected) => {
    const r = checkHost(rules, maps, host, port)
    expect(r.ok ? 'ok' : r.reason).toBe(expected)
  })
  test('a mapped name carries its mapping', () => {
    const r = checkHost(rules, maps, 'API.test.', 8443)
    expect(r).toEqual({ ok: true, host: 'api.test', mapping: maps[0] })
  })
})

describe('addresses the proxy refuses without host-map', () => {
  test.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.20.0.1', true],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['::1', true],
    ['::', true],
    ['fe80::1', true],
    ['fd00:ec2::254', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['64:ff9b::10.0.0.1', true],
    ['8.8.8.8', false],
    ['2606:4700::1111', false],
    ['not-an-ip', true]
  ])('%s → %s', (address, blocked) => {
    expect(isNonPublicAddress(address)).toBe(blocked)
  })
  test('ip literal detection and host:port splitting', () => {
    expect(isIpLiteral('api.test')).toBe(false)
    expect(isIpLiteral('1.example.com')).toBe(false)
    expect(splitHostPort('api.test:8443')).toEqual({ host: 'api.test', port: 8443 })
    expect(splitHostPort('[::1]:443')).toEqual({ host: '[::1]', port: 443 })
    expect(splitHostPort('api.test')).toBeUndefined()
    expect(splitHostPort('api.test:0')).toBeUndefined()
  })
})

describe('egress inputs', () => {
  let ws: string
  beforeAll(() => {
    ws = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-egress-unit-'))
    fs.writeFileSync(path.join(ws, 'Dockerfile'), 'FROM scratch\n')
    fs.writeFileSync(
      path.join(ws, 'ca.pem'),
      '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
    )
  })
  afterAll(() => fs.rmSync(ws, { recursive: true, force: true }))

  const base: Record<string, string> = {
    dockerfile: 'Dockerfile',
    'agent-command': 'true',
    network: 'allowlist',
    'allow-hosts': 'api.test:8443',
    'proxy-image': PINNED,
    'run-id': 'r1'
  }
  const read = (over: Record<string, string | undefined>, env: NodeJS.ProcessEnv = {}) =>
    getInputs((n) => ({ ...base, ...over })[n], {
      workspace: ws,
      environment: { SECRET_VAR: SECRET, OTHER: 'x', ...env },
      hostUid: 1000,
      event: LOCAL_EVENT,
      hostCpus: 4,
      defaultRunId: 'r1'
    })
  const refusal = (over: Record<string, string | undefined>): string => {
    try {
      read(over)
    } catch (error) {
      if (error instanceof ConfigurationError) return error.message
      throw error
    }
    throw new Error('accepted')
  }

  test('allowlist with credentials: the plan has the routes and the agent variables, never the secret', () => {
    const inputs = read({
      credentials: 'STUB=https://api.test:8443|SECRET_VAR|bearer',
      'host-map': 'api.test=172.18.0.5',
      'upstream-ca': 'ca.pem'
    })
    expect(inputs.egress?.credentials[0].secret).toBe(SECRET)
    const plan = planRun(inputs)
    expect(JSON.stringify(plan)).not.toContain(SECRET)
    expect(plan.egress?.agentEnv).toEqual(
      expect.arrayContaining([
        'HTTPS_PROXY=http://airlock-proxy:3128',
        'NO_PROXY=airlock-proxy',
        'STUB_BASE_URL=http://airlock-proxy:3128/STUB',
        'STUB_API_KEY=airlock-placeholder-key'
      ])
    )
    expect(plan.egress?.upstreamCaSha256).toMatch(/^[0-9a-f]{64}$/)
    const agent = plan.phases.find((p) => p.name === 'agent')!
    const spec = createOptions(
      containerSpec(plan, agent, {
        imageId: 'sha256:x',
        workspaceDir: '/w',
        taskFile: '/t',
        env: [],
        egress: { network: 'airlock-r1-internal', env: plan.egress!.agentEnv }
      })
    )
    expect(spec.HostConfig?.NetworkMode).toBe('airlock-r1-internal')
    expect(spec.NetworkDisabled).toBe(false)
    expect(spec.HostConfig?.Sysctls).toEqual({ 'net.ipv6.conf.all.disable_ipv6': '1' })
    expect(spec.Env).toContain('HTTP_PROXY=http://airlock-proxy:3128')
    expect(JSON.stringify(spec)).not.toContain(SECRET)
    expect(() =>
      containerSpec(plan, agent, { imageId: 'x', workspaceDir: '/w', taskFile: '/t', env: [] })
    ).toThrow(/without a running egress proxy/)
    // The tests phase stays network-less even in allowlist mode.
    const testsPhase = { ...agent, name: 'tests' as const, network: 'none' as const }
    const tests = createOptions(
      containerSpec(plan, testsPhase, {
        imageId: 'x',
        workspaceDir: '/w',
        taskFile: '/t',
        env: [],
        egress: { network: 'airlock-r1-internal', env: [] }
      })
    )
    expect(tests.HostConfig?.NetworkMode).toBe('none')
    expect(tests.NetworkDisabled).toBe(true)
  })

  test.each([
    [{ network: 'none' }, /^allow-hosts: only applies with `network: allowlist`/],
    [
      { network: undefined, 'allow-hosts': undefined, 'host-map': 'a.test=1.2.3.4' },
      /^host-map: only applies/
    ],
    [{ 'proxy-image': undefined }, /^proxy-image: is required/],
    [{ 'proxy-image': 'node:22' }, /^proxy-image: "node:22" is not pinned/],
    [{ 'allow-hosts': '10.0.0.1' }, /^allow-hosts: .*not a DNS name/],
    [{ 'allow-hosts': undefined }, /^allow-hosts: `network: allowlist` needs/],
    [{ 'host-map': 'other.test=1.2.3.4' }, /^host-map: "other.test" is neither/],
    [{ 'host-map': 'api.test=1.2.3.4,api.test=1.2.3.5' }, /mapped twice/],
    [{ credentials: 'A=https://a.test|MISSING|bearer' }, /^credentials: A: MISSING is not set/],
    [{ credentials: 'A=https://a.test|SECRET_VAR|bearer|HTTPS_PROXY' }, /already set/],
    [
      { credentials: 'A=https://a.test|SECRET_VAR|bearer', env: 'SECRET_VAR' },
      /also listed in env/
    ],
    [{ 'upstream-ca': 'nothing.pem' }, /^upstream-ca: "nothing.pem" cannot be read/],
    [{ 'upstream-ca': '../x.pem' }, /^upstream-ca: .*outside the workspace/],
    [{ 'upstream-ca': 'Dockerfile' }, /^upstream-ca: must be a PEM/]
  ])('refuses %j', (over, message) => {
    expect(refusal(over)).toMatch(message)
  })

  test('runtime runsc with allowlist is left to the daemon check at run time (gVisor network entry)', () => {
    // Whether gVisor can serve a networked run depends on how the daemon registered it
    // (resolveRuntime, tested in isolation.test.ts); the inputs no longer assume --network=none.
    expect(read({ runtime: 'runsc' }).runtime).toBe('runsc')
  })
})

function record(request: unknown, response: string, contentType: string): TranscriptRecord {
  const body = (text: string) => ({
    bytes: text.length,
    sha256: 'f'.repeat(64),
    truncated: false,
    text
  })
  return {
    type: 'transcript',
    time: '2026-01-01T00:00:00.000Z',
    route: 'X',
    method: 'POST',
    path: '/v1/x',
    status: 200,
    durationMs: 1,
    request: { headers: {}, body: body(JSON.stringify(request)) },
    response: { headers: { 'content-type': contentType }, body: body(response) }
  }
}
const sse = (events: object[]): string =>
  events
    .map((e) => `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`)
    .join('')

describe('transcript parsing', () => {
  test('server-sent events: fields, multi-line data, comments', () => {
    expect(parseSse(': hi\r\nevent: a\r\ndata: 1\r\ndata: 2\r\n\r\ndata: [DONE]\n\n')).toEqual([
      { event: 'a', data: '1\n2' },
      { event: null, data: '[DONE]' }
    ])
  })

  test('Anthropic stream: model, usage, text and tool input reassembled', () => {
    const ex = parseExchange(
      record(
        { model: 'claude-x', stream: true },
        sse([
          {
            type: 'message_start',
            message: {
              model: 'claude-x-20250101',
              usage: { input_tokens: 10, cache_read_input_tokens: 5, output_tokens: 1 }
            }
          },
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'lo' } },
          {
            type: 'content_block_start',
            index: 1,
            content_block: { type: 'tool_use', name: 'Write', input: {} }
          },
          {
            type: 'content_block_delta',
            index: 1,
            delta: { type: 'input_json_delta', partial_json: '{"a":' }
          },
          {
            type: 'content_block_delta',
            index: 1,
            delta: { type: 'input_json_delta', partial_json: '1}' }
          },
          {
            type: 'message_delta',
            delta: { stop_reason: 'tool_use' },
            usage: { output_tokens: 42 }
          },
          { type: 'message_stop' }
        ]),
        'text/event-stream; charset=utf-8'
      )
    )
    expect(ex).toEqual({
      model: 'claude-x-20250101',
      inputTokens: 15,
      outputTokens: 42,
      text: 'Hello',
      toolCalls: [{ name: 'Write', input: '{"a":1}' }],
      streamed: true
    })
  })

  test('OpenAI chat completions stream with usage in the last chunk', () => {
    const chunk = (o: object) =>
      `data: ${JSON.stringify({ object: 'chat.completion.chunk', model: 'gpt-x', ...o })}\n\n`
    const body =
      chunk({ choices: [{ index: 0, delta: { content: 'Hi ' } }] }) +
      chunk({
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, function: { name: 'edit', arguments: '{"p"' } }] }
          }
        ]
      }) +
      chunk({
        choices: [
          { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] } }
        ]
      }) +
      chunk({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 3 } }) +
      'data: [DONE]\n\n'
    expect(parseExchange(record({ model: 'gpt-x' }, body, 'text/event-stream'))).toMatchObject({
      model: 'gpt-x',
      inputTokens: 7,
      outputTokens: 3,
      text: 'Hi ',
      toolCalls: [{ name: 'edit', input: '{"p":1}' }]
    })
  })

  test('OpenAI responses stream: response.completed carries model and usage', () => {
    const body = sse([
      { type: 'response.output_text.delta', delta: 'ok' },
      {
        type: 'response.completed',
        response: { model: 'gpt-r', usage: { input_tokens: 20, output_tokens: 4 } }
      }
    ])
    const withCall = sse([
      {
        type: 'response.output_item.done',
        item: { type: 'function_call', name: 'exec_command', arguments: '{"cmd":"ls"}' }
      },
      {
        type: 'response.completed',
        response: { model: 'gpt-r', output: [], usage: { input_tokens: 1, output_tokens: 1 } }
      }
    ])
    expect(parseExchange(record({}, withCall, 'text/event-stream')).toolCalls).toEqual([
      { name: 'exec_command', input: '{"cmd":"ls"}' }
    ])
    expect(parseExchange(record({}, body, 'text/event-stream'))).toMatchObject({
      model: 'gpt-r',
      inputTokens: 20,
      outputTokens: 4,
      text: 'ok'
    })
  })

  test('plain JSON replies of both families, and garbage', () => {
    expect(
      parseExchange(
        record(
          {},
          JSON.stringify({
            model: 'm1',
            choices: [{ message: { content: 'c' } }],
            usage: { prompt_tokens: 1, completion_tokens: 2 }
          }),
          'application/json'
        )
      )
    ).toMatchObject({ model: 'm1', inputTokens: 1, outputTokens: 2, text: 'c', streamed: false })
    expect(
      parseExchange(
        record(
          {},
          JSON.stringify({
            model: 'm2',
            content: [{ type: 'text', text: 't' }],
            usage: { input_tokens: 3, output_tokens: 4 }
          }),
          'application/json'
        )
      )
    ).toMatchObject({ model: 'm2', inputTokens: 3, outputTokens: 4, text: 't' })
    expect(parseExchange(record('not json', '<html>', 'text/html'))).toMatchObject({
      model: null,
      inputTokens: 0,
      outputTokens: 0
    })
  })

  test('summary: models, tokens, request hashes', () => {
    const a = record(
      { model: 'a' },
      JSON.stringify({ model: 'a', usage: { input_tokens: 1, output_tokens: 1 } }),
      'application/json'
    )
    const b = record(
      { model: 'b' },
      JSON.stringify({ model: 'b', usage: { input_tokens: 2, output_tokens: 3 } }),
      'application/json'
    )
    expect(summarizeTranscript([a, b, a])).toEqual({
      requests: 3,
      models: ['a', 'b'],
      tokens: { input: 4, output: 5 },
      requestSha256s: ['f'.repeat(64), 'f'.repeat(64), 'f'.repeat(64)]
    })
  })
})

describe('egress evidence', () => {
  const event = (
    host: string,
    port: number,
    allowed: boolean,
    reason?: EgressEvent['reason']
  ): EgressEvent => ({
    type: 'egress',
    time: 't',
    kind: 'connect',
    method: 'CONNECT',
    host,
    port,
    allowed,
    ...(reason ? { reason } : {}),
    bytesUp: 0,
    bytesDown: 0,
    durationMs: 0
  })

  test('counts, distinct denied hosts, agent-chosen garbage kept out', () => {
    const s = summarizeEgress(
      [
        event('api.test', 443, true),
        event('evil.test', 443, false, 'not-allowlisted'),
        event('evil.test', 443, false, 'not-allowlisted'),
        event('1.2.3.4', 80, false, 'ip-literal'),
        event('x`<img>@you', 443, false, 'bad-request'),
        event('x`<img>', 443, false, 'not-allowlisted')
      ],
      []
    )
    expect(s).toEqual({
      allowed: 1,
      denied: 5,
      deniedHosts: ['1.2.3.4:80', 'evil.test:443'],
      transcript: null
    })
  })

  test('attempts past what the host keeps are still counted', () => {
    const s = summarizeEgress([event('api.test', 443, true)], [], { allowed: 5, denied: 7 })
    expect([s.allowed, s.denied]).toEqual([6, 7])
  })

  test('the comment lists denied names as an allow-hosts suggestion (IP literals not suggested)', () => {
    const report = {
      egress: {
        allowed: 1,
        denied: 2,
        deniedHosts: ['1.2.3.4:80', 'evil.test:443', 'svc.test:8443'],
        transcript: null
      }
    } as unknown as Report
    const text = renderEgress(report)
    expect(text).toContain('`1.2.3.4:80`')
    expect(text).toContain('allow-hosts: |\n  evil.test\n  svc.test:8443\n')
    expect(text).not.toMatch(/ {2}1\.2\.3\.4/)
  })

  test('masking and header redaction', () => {
    expect(masker([SECRET, ''])(`a ${SECRET} b ${SECRET}`)).toBe('a *** b ***')
    expect(
      redactHeaders({ authorization: 'Bearer x', 'x-api-key': 'k', 'x-custom': 'c', accept: 'a' }, [
        'x-custom'
      ])
    ).toEqual({
      authorization: '[REDACTED]',
      'x-api-key': '[REDACTED]',
      'x-custom': '[REDACTED]',
      accept: 'a'
    })
  })
})
