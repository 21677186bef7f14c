import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { CappedLog } from '../../src/evidence/logs.js'
import { MASK, Redactor, StreamRedactor } from '../../src/redact.js'

const SECRET = 'sk-live/Abc+123:xyz@example'
const b64 = (s: string): string => Buffer.from(s).toString('base64')

describe('Redactor', () => {
  const r = new Redactor([SECRET, 'short'])
  test.each([
    ['plain', `token=${SECRET}.`],
    ['base64', `Authorization: Basic ${b64(`user:${SECRET}`)}`],
    ['base64 at offset 1', b64(`x${SECRET}yy`)],
    ['base64 at offset 2', b64(`xy${SECRET}`)],
    ['base64url', b64(`ab${SECRET}`).replace(/\+/g, '-').replace(/\//g, '_')],
    ['URL-encoded', `https://h.invalid/?t=${encodeURIComponent(SECRET)}`],
    ['form-encoded', `t=${encodeURIComponent(SECRET).replace(/%20/g, '+')}`],
    ['JSON-escaped', JSON.stringify({ t: SECRET })],
    // What other JSON encoders write: PHP's and some Java's `\/`, .NET's `\u002B` for `+`, an
    // ASCII-only encoder's `\uXXXX` for all punctuation, in either case.
    ['JSON with \\/', JSON.stringify({ t: SECRET }).replace(/\//g, '\\/')],
    ['JSON with \\u002B (.NET)', JSON.stringify({ t: SECRET }).replace(/\+/g, '\\u002B')],
    [
      'JSON with \\u002b and \\/',
      JSON.stringify({ t: SECRET }).replace(/\+/g, '\\u002b').replace(/\//g, '\\/')
    ],
    [
      'JSON, all punctuation as \\u00xx',
      `{"t":"${[...SECRET].map((c) => (/[A-Za-z0-9]/.test(c) ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)).join('')}"}`
    ],
    [
      'URL-encoded, lower-case hex',
      `t=${encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())}`
    ],
    ['hex', Buffer.from(SECRET).toString('hex')],
    ['split across lines', `${SECRET.slice(0, 9)}\n${SECRET.slice(9, 20)}\r\n${SECRET.slice(20)}`]
  ])('%s', (_name, text) => {
    const out = r.redact(text)
    expect(out).toContain(MASK)
    expect(out).not.toContain(SECRET)
    expect(out).not.toContain(SECRET.slice(0, 12))
    // The line structure of the text is kept.
    expect(out.split('\n').length).toBe(text.split('\n').length)
  })

  test('one matcher for every form: leftmost, the longest at a start, no blank line spanned', () => {
    const m = new Redactor(['abcdefgh', 'abcdefghijkl', 'ghijklmn'])
    // The longer value wins where both start; the overlapping third is not masked twice.
    expect(m.redact('xx abcdefghijklmn yy')).toBe(`xx ${MASK}mn yy`)
    // One line break may sit inside a value, a blank line may not.
    expect(m.redact('abcd\r\nefgh')).toBe(`${MASK}\n`)
    expect(m.redact('abcd\n\nefgh')).toBe('abcd\n\nefgh')
    expect(m.redact('ab\ncd\nefgh')).toBe(`${MASK}\n\n`)
  })

  test('the longest and most punctuated values the docs allow are all masked in every form', () => {
    const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('')
    const values = [
      'k'.repeat(1024),
      printable.repeat(11).slice(0, 1024),
      `${printable}${printable}`.replace(/ /g, '')
    ]
    const m = new Redactor(values)
    for (const v of values) {
      const text = [
        v,
        encodeURIComponent(v),
        JSON.stringify(v).slice(1, -1),
        Buffer.from(v).toString('hex'),
        Buffer.from(v).toString('base64')
      ].join(' | ')
      const out = m.redact(`before ${text} after`)
      expect(out.startsWith('before ')).toBe(true)
      expect(out.endsWith(' after')).toBe(true)
      expect(out).not.toContain(v.slice(0, 40))
      expect(out.split(MASK).length - 1).toBeGreaterThanOrEqual(5)
    }
  })

  test('values shorter than 6 characters are not masked (they would hide ordinary words)', () => {
    expect(r.redact('a short word')).toBe('a short word')
  })

  test('no secrets: text unchanged; nested values and keys are masked', () => {
    expect(new Redactor([]).redact(SECRET)).toBe(SECRET)
    expect(r.redactValue({ a: [SECRET, 1, null], [SECRET]: { b: `x${SECRET}` } })).toEqual({
      a: [MASK, 1, null],
      [MASK]: { b: `x${MASK}` }
    })
  })
})

describe('StreamRedactor: every chunk boundary', () => {
  const text = Buffer.from(
    `start ${SECRET} middle ${b64(SECRET)} and ${SECRET.slice(0, 10)}\n${SECRET.slice(10)} end \xff\n`,
    'latin1'
  )
  test.each([1, 2, 3, 5, 7, 13, 64, 4096])('chunks of %i bytes', (size) => {
    const s = new StreamRedactor([SECRET])
    const out: Buffer[] = []
    for (let i = 0; i < text.length; i += size) out.push(s.push(text.subarray(i, i + size)))
    out.push(s.flush())
    const all = Buffer.concat(out)
    expect(all.toString('latin1')).toBe(`start ${MASK} middle ${MASK} and ${MASK}\n end \xff\n`)
  })
})

describe('CappedLog with a redactor', () => {
  test('the file and the echoed lines never hold the secret, also cut between writes', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-log-'))
    try {
      const lines: string[] = []
      const log = new CappedLog(
        path.join(dir, 'a.log'),
        1 << 20,
        (l) => lines.push(l),
        new StreamRedactor([SECRET])
      )
      const data = `hello ${SECRET}\nencoded ${encodeURIComponent(SECRET)}\n`
      for (const ch of data) log.write(Buffer.from(ch))
      await log.finish()
      const file = fs.readFileSync(path.join(dir, 'a.log'), 'utf8')
      expect(file).toBe(`hello ${MASK}\nencoded ${MASK}\n`)
      expect(lines).toEqual([`hello ${MASK}`, `encoded ${MASK}`])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
