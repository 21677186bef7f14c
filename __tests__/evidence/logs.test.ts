import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { CappedLog } from '../../src/evidence/logs.js'

describe('CappedLog', () => {
  let dir: string
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-log-'))
  })
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

  it('keeps everything under the cap, line by line', async () => {
    const lines: string[] = []
    const log = new CappedLog(path.join(dir, 'a.log'), 1000, (l) => lines.push(l))
    log.write(Buffer.from('one\ntw'))
    log.write(Buffer.from('o\nthree'))
    await log.finish()
    expect(fs.readFileSync(path.join(dir, 'a.log'), 'utf8')).toBe('one\ntwo\nthree')
    expect(lines).toEqual(['one', 'two', 'three'])
    expect(log.truncated).toBe(false)
  })

  it('drops what is over the cap and says so at the end', async () => {
    const lines: string[] = []
    const log = new CappedLog(path.join(dir, 'b.log'), 10, (l) => lines.push(l))
    for (let i = 0; i < 100; i++) log.write(Buffer.from('0123456789\n'))
    await log.finish()
    const text = fs.readFileSync(path.join(dir, 'b.log'), 'utf8')
    expect(text.startsWith('0123456789')).toBe(true)
    expect(text).toMatch(/log truncated: kept the first 10 of 1100 bytes/)
    expect(log.bytesTotal).toBe(1100)
    expect(log.bytesKept).toBe(10)
    expect(lines.at(-1)).toMatch(/log truncated/)
  })
})
