import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { carryEntries } from '../../src/workspace/carry.js'

describe('carryEntries (build output into a fresh copy)', () => {
  let root: string
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-carry-'))
  })
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

  test('moves folders and links as they are; never through a symlinked parent', () => {
    const from = path.join(root, 'from')
    const to = path.join(root, 'to')
    const host = path.join(root, 'host-secret')
    fs.mkdirSync(path.join(from, 'node_modules/left-pad'), { recursive: true })
    fs.writeFileSync(path.join(from, 'node_modules/left-pad/index.js'), 'x')
    fs.symlinkSync('/etc', path.join(from, 'linked'))
    // After the snapshot, the tests replaced a parent folder with a link to a host folder.
    fs.mkdirSync(path.join(host, 'node_modules'), { recursive: true })
    fs.writeFileSync(path.join(host, 'node_modules/secret'), 'host')
    fs.symlinkSync(host, path.join(from, 'pkg'))
    // In the copy, a parent that is a link (from the agent's tree) is not written through.
    fs.mkdirSync(to)
    fs.symlinkSync(host, path.join(to, 'other'))
    fs.mkdirSync(path.join(from, 'other/build'), { recursive: true })

    const moved = carryEntries(from, to, [
      Buffer.from('node_modules'),
      Buffer.from('linked'),
      Buffer.from('pkg/node_modules'),
      Buffer.from('other/build'),
      Buffer.from('../escape'),
      Buffer.from('gone')
    ])
    expect(moved).toBe(2)
    expect(fs.readFileSync(path.join(to, 'node_modules/left-pad/index.js'), 'utf8')).toBe('x')
    expect(fs.readlinkSync(path.join(to, 'linked'))).toBe('/etc')
    expect(fs.existsSync(path.join(host, 'node_modules/secret'))).toBe(true)
    expect(fs.existsSync(path.join(to, 'pkg'))).toBe(false)
    expect(fs.existsSync(path.join(host, 'build'))).toBe(false)
  })
})
