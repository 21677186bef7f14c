// Pure parts of what the proxy checks on the way back and on the way in: the ClientHello parser,
// paths and scopes, address ranges, credential values, budgets, response masking, and error
// messages that echo input.
import { randomBytes } from 'node:crypto'
import { Duplex, Readable } from 'node:stream'
import type * as http from 'node:http'
import * as tls from 'node:tls'
import * as zlib from 'node:zlib'
import { ConfigurationError } from '../../src/errors.js'
import { escapeHidden } from '../../src/text-filter.js'
import { Budget } from '../../src/egress/budget.js'
import { isNonPublicAddress } from '../../src/egress/host-rules.js'
import {
  parseCredential,
  pathProblem,
  scopeAllows,
  secretProblem
} from '../../src/egress/credential-routes.js'
import { filterResponse } from '../../src/egress/reflection.js'
import { parseClientHello } from '../../src/egress/sni.js'
import { summarizeEgress } from '../../src/egress/evidence.js'
import { renderEgress } from '../../src/report/egress.js'
import { StreamRedactor } from '../../src/redact.js'
import { parsePolicy } from '../../src/policy/policy-file.js'
import type { Report } from '../../src/report/report.js'

/** The bytes Node's TLS client sends first, captured without any network. */
async function clientHello(options: tls.ConnectionOptions): Promise<Buffer> {
  return new Promise((resolve) => {
    const socket = new Duplex({
      read() {},
      write(chunk: Buffer, _enc, done) {
        resolve(chunk)
        done()
      }
    })
    const t = tls.connect({ socket, ...options })
    t.on('error', () => undefined)
    setTimeout(() => t.destroy(), 200).unref()
  })
}

describe('ClientHello server name', () => {
  test('the name a TLS client sends, also when the hello arrives byte by byte', async () => {
    const hello = await clientHello({ servername: 'api.test' })
    expect(parseClientHello(hello)).toEqual({
      status: 'ok',
      serverName: 'api.test',
      encrypted: false
    })
    for (let i = 0; i < hello.length - 1; i += 97) {
      expect(parseClientHello(hello.subarray(0, i)).status).toBe('need-more')
    }
  })

  test('no SNI', async () => {
    const hello = await clientHello({ servername: '' })
    expect(parseClientHello(hello)).toMatchObject({ status: 'ok', serverName: null })
  })

  test.each([
    ['plain HTTP', Buffer.from('GET / HTTP/1.1\r\nHost: api.test\r\n\r\n')],
    ['a TLS alert', Buffer.from([21, 3, 3, 0, 2, 2, 40])],
    ['a zero-length record', Buffer.from([22, 3, 1, 0, 0])],
    ['a truncated hello body', Buffer.from([22, 3, 1, 0, 6, 1, 0, 0, 2, 3, 3])]
  ])('%s is not a ClientHello', (_what, bytes) => {
    expect(parseClientHello(bytes).status).toBe('not-tls')
  })

  test('random bytes never throw', () => {
    for (let i = 0; i < 500; i++) {
      const b = randomBytes(1 + (i % 300))
      b[0] = 22
      b[1] = 3
      expect(() => parseClientHello(b)).not.toThrow()
    }
  })
})

describe('credential route paths and scopes', () => {
  test.each([
    ['/v1/messages', undefined],
    ['/v1beta/models/gemini:streamGenerateContent', undefined],
    ['/v1/../admin', 'contains a . or .. segment'],
    ['/v1/./messages', 'contains a . or .. segment'],
    ['/..', 'contains a . or .. segment'],
    ['/v1/%2e%2e/admin', 'contains an encoded dot, slash, backslash or percent'],
    ['/v1/%2E%2E/admin', 'contains an encoded dot, slash, backslash or percent'],
    ['/v1/..%2fadmin', 'contains an encoded dot, slash, backslash or percent'],
    ['/v1/%252e%252e/admin', 'contains an encoded dot, slash, backslash or percent'],
    ['/v1/..%5cadmin', 'contains an encoded dot, slash, backslash or percent'],
    ['//evil.test/x', 'contains //'],
    ['/v1//messages', 'contains //'],
    ['/v1\\..\\admin', 'contains a backslash, space or control character'],
    ['v1/messages', 'does not start with /']
  ])('%s → %s', (p, problem) => {
    expect(pathProblem(p)).toBe(problem)
  })

  test('allow= in a credentials line', () => {
    const r = parseCredential(
      'ANTHROPIC=https://api.anthropic.com|K|x-api-key|allow=POST /v1/messages, GET /v1/models/'
    )
    expect(r.scope).toEqual([
      { method: 'POST', prefix: '/v1/messages' },
      { method: 'GET', prefix: '/v1/models' }
    ])
    expect(r.baseUrlEnv).toBe('ANTHROPIC_BASE_URL')
    const withEnvs = parseCredential('A=https://a.example|K|bearer|B_URL|B_KEY|allow=* /v1')
    expect([withEnvs.baseUrlEnv, withEnvs.keyEnv, withEnvs.scope]).toEqual([
      'B_URL',
      'B_KEY',
      [{ method: '*', prefix: '/v1' }]
    ])
  })

  test.each([
    ['allow=', 'needs at least one'],
    ['allow=POST', 'is not "METHOD /path-prefix"'],
    ['allow=post /v1', 'is not "METHOD /path-prefix"'],
    ['allow=POST /v1/../x', 'is not a plain path'],
    ['allow=POST /a|allow=GET /b', 'give allow= once']
  ])('%s is refused', (scope, message) => {
    expect(() => parseCredential(`A=https://a.example|K|bearer|${scope}`)).toThrow(message)
  })

  test.each([
    ['POST', '/v1/messages', true],
    ['POST', '/v1/messages/count_tokens', true],
    ['post', '/v1/messages', true],
    ['GET', '/v1/messages', false],
    ['POST', '/v1/messagesX', false],
    ['POST', '/v1', false],
    ['GET', '/v1/models', true]
  ])('%s %s → %s', (method, p, ok) => {
    const scope = [
      { method: 'POST', prefix: '/v1/messages' },
      { method: 'GET', prefix: '/v1/models' }
    ]
    expect(scopeAllows(scope, method, p)).toBe(ok)
    expect(scopeAllows(undefined, method, p)).toBe(true)
  })
})

describe('addresses judged by what they embed', () => {
  test.each([
    ['8.8.8.8', false],
    ['2606:4700:4700::1111', false],
    ['64:ff9b::808:808', false],
    ['2002:808:808::1', false],
    ['169.254.169.254', true],
    ['10.1.2.3', true],
    ['100.64.0.1', true],
    ['255.255.255.255', true],
    ['::ffff:169.254.169.254', true],
    ['::ffff:a9fe:a9fe', true],
    ['::ffff:7f00:1', true],
    ['::169.254.169.254', true],
    ['::a9fe:a9fe', true],
    ['64:ff9b::a9fe:a9fe', true],
    ['64:ff9b::169.254.169.254', true],
    ['64:ff9b::a00:1', true],
    ['64:ff9b:1::a00:1', true],
    ['2002:a9fe:a9fe::1', true],
    ['2002:c0a8:101::1', true],
    ['2001:0:a00:1::1', true],
    ['2001:0:808:808:0:0:f5ff:fffe', true],
    ['fd00::1', true],
    ['fe80::1', true],
    ['::1', true],
    ['::', true],
    ['not-an-address', true]
  ])('%s non-public: %s', (address, expected) => {
    expect(isNonPublicAddress(address)).toBe(expected)
  })
})

describe('credential values', () => {
  test.each([
    ['sk-ant-api03-abc_DEF-123', undefined],
    ['token!with#symbols$0', undefined],
    ['a'.repeat(1024), undefined],
    ['a'.repeat(1025), 'is longer than 1024 bytes'],
    ['abc', 'is shorter than 6 characters (too short to be masked in the evidence)'],
    ['value\nwith-newline', 'contains a line break or NUL'],
    ['value\r-carriage', 'contains a line break or NUL'],
    ['value\u0000-nul', 'contains a line break or NUL'],
    [
      'välue-nonascii',
      'contains a character that is not printable ASCII (a control character or non-ASCII)'
    ],
    [
      'tab\tinside',
      'contains a character that is not printable ASCII (a control character or non-ASCII)'
    ],
    [' leading-space', 'starts or ends with a space']
  ])('%j → %s', (value, problem) => {
    expect(secretProblem(value, 6)).toBe(problem)
  })
})

describe('budget', () => {
  test('requests: the one past the limit is refused with the reason', () => {
    const b = new Budget({ maxRequests: 2 })
    expect([b.admit(), b.admit()]).toEqual([undefined, undefined])
    expect(b.admit()).toBe('max-model-requests (2) reached: 2 model request(s) sent')
    expect(b.state).toEqual({
      requests: 2,
      tokens: 0,
      costUsd: 0,
      hit: 'max-model-requests',
      denied: 1
    })
  })
  test('tokens: counted from answers; refused once reached', () => {
    const b = new Budget({ maxTokens: 100 })
    expect(b.admit()).toBeUndefined()
    b.addTokens(60)
    expect(b.admit()).toBeUndefined()
    b.addTokens(50)
    b.addTokens(-5)
    b.addTokens(NaN)
    expect(b.admit()).toBe('max-model-tokens (100) reached: 110 token(s) used')
  })
  test('cost: priced from each exchange at its model rate; refused once reached', () => {
    // claude-sonnet-4: $3 input, $15 output per million tokens.
    const b = new Budget({ maxCostUsd: 0.001 })
    expect(b.admit()).toBeUndefined()
    b.addExchange('claude-sonnet-4-5-20250929', 120, 30)
    expect(b.state.costUsd).toBeCloseTo(0.00081, 9)
    expect(b.admit()).toBeUndefined()
    b.addExchange('claude-sonnet-4-5-20250929', 120, 30)
    expect(b.admit()).toBe('max-cost-usd (0.001) reached: $0.00162 spent at list prices')
    expect(b.state).toMatchObject({ requests: 2, tokens: 300, hit: 'max-cost-usd', denied: 1 })
  })
  test('cost: a model the price table does not know is charged at the dearest rate', () => {
    const b = new Budget({ maxCostUsd: 1 })
    b.addExchange('some-unlisted-model', 1_000_000, 0)
    b.addExchange(null, 0, 0)
    expect(b.state.costUsd).toBe(15)
    expect(b.admit()).toMatch(/^max-cost-usd \(1\) reached: \$15 spent/)
  })
  test('the report and the comment say the cost budget was reached', () => {
    const summary = summarizeEgress(
      [
        {
          type: 'egress',
          time: '',
          kind: 'credential',
          method: 'POST',
          host: 'api.test',
          port: 443,
          bytesUp: 0,
          bytesDown: 0,
          durationMs: 0,
          allowed: false,
          reason: 'budget-exceeded',
          detail: 'max-cost-usd (0.5) reached: $0.51 spent at list prices'
        }
      ],
      [],
      undefined,
      { maxCostUsd: 0.5 }
    )
    expect(summary.budget).toEqual({
      maxRequests: null,
      maxTokens: null,
      maxCostUsd: 0.5,
      hit: 'max-cost-usd',
      denied: 1
    })
    const text = renderEgress({ egress: summary } as unknown as Report)
    expect(text).toContain('`max-cost-usd: 0.5`')
  })
  test('the report and the comment say the budget was reached', () => {
    const event = {
      type: 'egress' as const,
      time: '',
      kind: 'credential' as const,
      method: 'POST',
      host: 'api.test',
      port: 443,
      bytesUp: 0,
      bytesDown: 0,
      durationMs: 0
    }
    const summary = summarizeEgress(
      [
        { ...event, allowed: true, reflected: 2 },
        {
          ...event,
          allowed: false,
          reason: 'budget-exceeded',
          detail: 'max-model-tokens (10) reached: 12 token(s) used'
        }
      ],
      [],
      undefined,
      { maxTokens: 10 }
    )
    expect(summary.budget).toEqual({
      maxRequests: null,
      maxTokens: 10,
      maxCostUsd: null,
      hit: 'max-model-tokens',
      denied: 1
    })
    expect(summary.reflected).toBe(2)
    expect(summary.deniedHosts).toEqual([])
    const text = renderEgress({ egress: summary } as unknown as Report)
    expect(text).toContain('Model budget reached')
    expect(text).toContain('`max-model-tokens: 10`')
    expect(text).toContain('echoed the injected credential** 2 time(s)')
  })
})

describe('response masking', () => {
  const SECRET = `sk-${randomBytes(12).toString('hex')}`
  const upstream = (chunks: Buffer[]): http.IncomingMessage =>
    Readable.from(chunks) as unknown as http.IncomingMessage
  const collect = async (r: Readable): Promise<string> => {
    const out: Buffer[] = []
    for await (const c of r) out.push(c as Buffer)
    return Buffer.concat(out).toString('latin1')
  }

  test('a key cut across chunks, in several encodings, in headers and body', async () => {
    const body = Buffer.from(
      `data: {"k":"${SECRET}","b":"${Buffer.from(SECRET).toString('base64')}","u":"${encodeURIComponent(SECRET)}"}\n\n`
    )
    const chunks = [body.subarray(0, 20), body.subarray(20, 31), body.subarray(31)]
    const f = filterResponse(
      upstream(chunks),
      { 'x-echo': SECRET, 'content-length': String(body.length) },
      [SECRET]
    )
    if ('error' in f) throw new Error(f.error)
    expect(f.headers).toEqual({ 'x-echo': '***' })
    const text = await collect(f.body)
    expect(text).toBe('data: {"k":"***","b":"***","u":"***"}\n\n')
    expect(f.reflected()).toBe(4)
  })

  test.each(['gzip', 'deflate', 'br', 'gzip, br'])(
    '%s bodies are decoded and masked',
    async (enc) => {
      let data = Buffer.from(`{"error":"bad key ${SECRET}"}`)
      for (const e of enc.split(', ')) {
        data =
          e === 'gzip'
            ? zlib.gzipSync(data)
            : e === 'br'
              ? zlib.brotliCompressSync(data)
              : zlib.deflateSync(data)
      }
      const f = filterResponse(upstream([data]), { 'content-encoding': enc }, [SECRET])
      if ('error' in f) throw new Error(f.error)
      expect(f.headers['content-encoding']).toBeUndefined()
      expect(await collect(f.body)).toBe('{"error":"bad key ***"}')
    }
  )

  test('an unknown encoding is refused', () => {
    expect(filterResponse(upstream([]), { 'content-encoding': 'zstd' }, [SECRET])).toEqual({
      error: 'content-encoding zstd cannot be inspected'
    })
  })

  test('a complete server-sent event is released at once, not held for the look-behind', () => {
    const s = new StreamRedactor([SECRET])
    expect(s.push(Buffer.from('event: ping\ndata: {}\n\n')).toString()).toBe(
      'event: ping\ndata: {}\n'
    )
    expect(s.flush().toString()).toBe('\n')
  })
})

describe('control characters in error messages', () => {
  test('escaped, never raw', () => {
    expect(escapeHidden('a\u001b[31mred\u0007\r\u202egnp.exe\u0085')).toBe(
      'a\\x1b[31mred\\x07\\x0d\\u202egnp.exe\\x85'
    )
    expect(escapeHidden('line one\nline two\ttab')).toBe('line one\nline two\ttab')
    const e = new ConfigurationError('allow-hosts', '"evil\u001b]8;;x\u0007" is not a host')
    expect(e.message).toBe('allow-hosts: "evil\\x1b]8;;x\\x07" is not a host')
  })

  test.each([
    ['an unknown key', 'allow-hostz\u001b[2J: x\n'],
    ['a bad value', 'network: "none\u001b[2J"\n'],
    ['a YAML syntax error', 'network: [\u001b[2J\n']
  ])('policy file with %s', (_what, text) => {
    let message = ''
    try {
      parsePolicy(text)
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError)
      message = (error as Error).message
    }
    expect(message).toMatch(/\\x1b|\\u001b/)
    // eslint-disable-next-line no-control-regex -- the point of the test
    expect(message).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/)
  })
})
