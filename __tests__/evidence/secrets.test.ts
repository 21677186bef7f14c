import { generateKeyPairSync, randomBytes, randomInt } from 'node:crypto'
import { Redactor } from '../../src/redact.js'
import {
  decodedViews,
  maskLine,
  patchSections,
  runSecretValues,
  scanDiff,
  scanText
} from '../../src/evidence/secrets.js'

// Real-looking tokens, made at test time (no token-shaped string is stored in the repository).
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
const pick = (alphabet: string, n: number): string =>
  Array.from({ length: n }, () => alphabet[randomInt(alphabet.length)]).join('')
const b64url = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url')

const privateKey = (): string =>
  generateKeyPairSync('rsa', { modulusLength: 1024 })
    .privateKey.export({ type: 'pkcs1', format: 'pem' })
    .toString()
    .trim()

const TOKENS: [string, string, () => string][] = [
  ['ghp_', 'secretlint-rule-github', () => `ghp_${pick(ALNUM, 36)}`],
  ['gho_', 'secretlint-rule-github', () => `gho_${pick(ALNUM, 36)}`],
  ['ghu_', 'secretlint-rule-github', () => `ghu_${pick(ALNUM, 36)}`],
  ['ghs_', 'secretlint-rule-github', () => `ghs_${pick(ALNUM, 36)}`],
  ['ghr_', 'secretlint-rule-github', () => `ghr_${pick(ALNUM, 36)}`],
  [
    'github_pat_',
    'secretlint-rule-github',
    () => `github_pat_${pick(ALNUM, 22)}_${pick(ALNUM, 59)}`
  ],
  ['sk-ant-', 'secretlint-rule-anthropic', () => `sk-ant-api03-${pick(ALNUM + '-_', 93)}AA`],
  ['AKIA', 'secretlint-rule-aws', () => `AKIA${pick(UPPER, 16)}`],
  ['ASIA', 'secretlint-rule-aws', () => `ASIA${pick(UPPER, 16)}`],
  [
    'xoxb-',
    'secretlint-rule-slack',
    () => `xoxb-${pick('0123456789', 12)}-${pick('0123456789', 13)}-${pick(ALNUM, 24)}`
  ],
  [
    'JWT',
    'airlock/jwt',
    () =>
      `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ sub: pick(ALNUM, 12), iat: 1 })}.${randomBytes(32).toString('base64url')}`
  ],
  ['private key', 'secretlint-rule-privatekey', privateKey]
]

const ENCODINGS: [string, (t: string) => string][] = [
  ['raw', (t) => `const token = "${t}"\n`],
  ['base64', (t) => `blob: ${Buffer.from(`token=${t}\n`).toString('base64')}\n`],
  ['URL-encoded', (t) => `https://example.invalid/?q=${encodeURIComponent(`token ${t}`)}\n`],
  ['JSON-escaped', (t) => `${JSON.stringify({ token: `\n${t}\n` })}\n`]
]

describe('secret scanning (secretlint recommended rules + JWT)', () => {
  const cases = TOKENS.flatMap(([shape, rule, make]) =>
    ENCODINGS.map(([encoding, wrap]) => [shape, encoding, rule, make, wrap] as const)
  )
  test.each(cases)('%s, %s: found by %s', async (_shape, _enc, rule, make, wrap) => {
    const token = make()
    const findings = await scanText(wrap(token), 'src/config.ts')
    const f = findings.find((x) => x.rule === rule)
    expect(f).toBeDefined()
    // The value found is the token itself (the private key: its block), so every form is masked.
    const redactor = new Redactor(findings.map((x) => x.value))
    const masked = redactor.redact(wrap(token))
    const core = token.includes('PRIVATE KEY') ? token.split('\n')[1] : token
    for (const [, encode] of ENCODINGS) {
      const encoded = redactor.redact(encode(token))
      expect(encoded).not.toContain(core)
    }
    expect(masked).not.toContain(core)
  })

  test.each(cases.filter(([shape]) => shape !== 'private key'))(
    '%s, %s, one line of live output: found synchronously',
    (_shape, _enc, _rule, make, wrap) => {
      const token = make()
      const redactor = new Redactor([])
      const line = wrap(token).trim()
      const masked = maskLine(redactor, line)
      expect(masked).not.toContain(token)
      // The value joined the redactor: later outputs mask it too.
      expect(redactor.redact(`again ${token}`)).toBe('again ***')
    }
  )

  test('a secretlint-disable comment written by the agent does not silence the scanner', async () => {
    const token = `ghp_${pick(ALNUM, 36)}`
    for (const text of [
      `// secretlint-disable\nconst t = "${token}"\n`,
      `const t = "${token}" // secretlint-disable-line\n`,
      `// secretlint-disable-next-line\nconst t = "${token}"\n`
    ]) {
      expect((await scanText(text)).map((f) => f.rule)).toContain('secretlint-rule-github')
    }
  })

  test('ordinary code and placeholder-like strings are not findings', async () => {
    const text = [
      'const key = process.env.API_KEY',
      'ghp_short',
      'AKIAIOSFODNN7EXAMPLE',
      'eyJhbGciOi.not-a-jwt',
      'sha256:' + 'a'.repeat(64)
    ].join('\n')
    expect(await scanText(text)).toEqual([])
  })

  test('decoded views: URL, JSON escapes, base64 runs', () => {
    const views = decodedViews(
      'a%41 \\u0042 ' + Buffer.from('hello base64 world, readable').toString('base64')
    )
    expect(views.some((v) => v.includes('aA'))).toBe(true)
    expect(views.some((v) => v.includes(' B '))).toBe(true)
    expect(views.some((v) => v.includes('hello base64 world'))).toBe(true)
  })
})

describe('scanDiff', () => {
  const patchOf = (files: Record<string, string[]>): Buffer =>
    Buffer.from(
      Object.entries(files)
        .map(
          ([f, lines]) =>
            `diff --git a/${f} b/${f}\nindex 0000000..1111111 100644\n--- a/${f}\n+++ b/${f}\n@@ -1 +1,${lines.length} @@\n${lines.join('\n')}\n`
        )
        .join('')
    )

  test('a token added in a file: a secret-in-diff violation naming the rule and file, masked in the patch', async () => {
    const token = `ghs_${pick(ALNUM, 36)}`
    const patch = patchOf({
      'ok.txt': ['+hello'],
      'src/leak.ts': [' keep', `+const t = "${token}"`]
    })
    const redactor = new Redactor([])
    const r = await scanDiff(patch, redactor)
    expect(r.violations).toEqual([
      {
        rule: 'secret-in-diff',
        path: 'src/leak.ts',
        detail: expect.stringContaining('secretlint-rule-github') as string
      }
    ])
    expect(JSON.stringify(r.violations)).not.toContain(token)
    expect(r.patch.toString()).not.toContain(token)
    expect(r.patch.toString()).toContain('+hello')
    // The redactor now masks it in every other output.
    expect(redactor.redact(`log: ${Buffer.from(token).toString('base64')}`)).not.toContain(
      Buffer.from(token).toString('base64').slice(4, 20)
    )
  })

  test('a token only on a removed or context line is not the change', async () => {
    const token = `ghp_${pick(ALNUM, 36)}`
    const patch = patchOf({ 'a.txt': [`-old ${token}`, ` ctx ${token}`, '+new'] })
    expect((await scanDiff(patch, new Redactor([]))).violations).toEqual([])
  })

  test('a credential value the run holds, written by the agent: a violation naming the file', async () => {
    const secret = `canary-${randomBytes(12).toString('hex')}`
    const patch = patchOf({
      'notes.md': [`+the key is ${secret.split('').reverse().join('')}`],
      'k.txt': [`+${secret}`]
    })
    const r = await scanDiff(patch, new Redactor([secret]))
    expect(r.violations.map((v) => [v.rule, v.path])).toEqual([['secret-in-diff', 'k.txt']])
    expect(r.patch.toString()).not.toContain(secret)
  })

  test('patchSections keeps only added lines, per file', () => {
    expect(patchSections('diff --git a/x b/x\n--- a/x\n+++ b/x\n-a\n+b\n c\n')).toEqual([
      { file: 'x', added: 'b' }
    ])
  })
})

test('runSecretValues: env values, extra secrets and every credential value', () => {
  expect(
    runSecretValues({
      env: [{ value: 'env-value-1' }],
      secrets: ['extra-secret'],
      egress: { credentials: { route: 'credential-value' } }
    })
  ).toEqual(['env-value-1', 'extra-secret', 'credential-value'])
})
