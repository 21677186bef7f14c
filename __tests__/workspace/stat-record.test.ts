import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { diffTrees } from '../../src/evidence/diff.js'
import { snapshotWorkspace } from '../../src/evidence/snapshot.js'
import {
  NO_STAT_RECORD,
  StatRecorder,
  recordedOid,
  sameKey,
  statKey
} from '../../src/workspace/stat-record.js'
import type { StatKey } from '../../src/workspace/stat-record.js'
import { prepareWorkspace } from '../../src/workspace/workspace.js'
import { makeRepo } from '../evidence/helpers.js'

const KEY: StatKey = { dev: 2049n, ino: 1234n, mode: 0o100644n, size: 4n, ctimeNs: 1_000_000_000n }
const OID = 'a'.repeat(40)

/** A BigIntStats-shaped object: the key's fields plus the ones the key must ignore. */
const stats = (k: StatKey, extra: { mtimeNs?: bigint; atimeNs?: bigint } = {}) =>
  ({ ...k, mtimeNs: 5n, atimeNs: 6n, ...extra }) as unknown as fs.BigIntStats

describe('stat record key', () => {
  it.each<[string, Partial<StatKey>]>([
    [
      'another ctime (any write, chmod, utimes, rename or link since)',
      { ctimeNs: KEY.ctimeNs + 1n }
    ],
    ['an earlier ctime', { ctimeNs: KEY.ctimeNs - 1n }],
    ['another inode (a file put in its place)', { ino: KEY.ino + 1n }],
    ['another device', { dev: KEY.dev + 1n }],
    ['another size', { size: KEY.size + 1n }],
    ['another mode (chmod +x)', { mode: 0o100755n }],
    ['another file type (a symlink)', { mode: 0o120777n }]
  ])('does not match with %s', (_, change) => {
    expect(sameKey(KEY, { ...KEY, ...change })).toBe(false)
    const record = new StatRecorder()
    record.add('a.txt', stats(KEY), OID)
    expect(recordedOid(record.seal(KEY.ctimeNs + 10n), 'a.txt', { ...KEY, ...change })).toBe(
      undefined
    )
  })

  it('matches on identical stat data, whatever mtime and atime say (they are not in the key)', () => {
    const record = new StatRecorder()
    record.add('a.txt', stats(KEY), OID)
    const sealed = record.seal(KEY.ctimeNs + 1n)
    expect(recordedOid(sealed, 'a.txt', statKey(stats(KEY, { mtimeNs: 99n, atimeNs: 98n })))).toBe(
      OID
    )
    expect(statKey(stats(KEY, { mtimeNs: 99n }))).toEqual(KEY)
  })

  it('matches only the recorded path', () => {
    const record = new StatRecorder()
    record.add('a.txt', stats(KEY), OID)
    const sealed = record.seal(KEY.ctimeNs + 1n)
    expect(recordedOid(sealed, 'b.txt', KEY)).toBe(undefined)
    expect(recordedOid(NO_STAT_RECORD, 'a.txt', KEY)).toBe(undefined)
  })

  it('trusts no record whose ctime is not strictly before the marker (same clock tick)', () => {
    const record = new StatRecorder()
    record.add('early', stats(KEY), OID)
    record.add('same-tick', stats({ ...KEY, ino: 2n, ctimeNs: 2_000n + KEY.ctimeNs }), OID)
    record.add('late', stats({ ...KEY, ino: 3n, ctimeNs: 3_000n + KEY.ctimeNs }), OID)
    expect(record.latestCtimeNs).toBe(KEY.ctimeNs + 3_000n)
    const sealed = record.seal(KEY.ctimeNs + 2_000n)
    expect([...sealed.entries.keys()]).toEqual(['early'])
  })
})

describe('snapshot with the stat record', () => {
  let root: string
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-stat-'))
  })
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

  it('reads again what changed, however its mtime and size were put back; reuses the rest', async () => {
    const files: Record<string, string> = { 'a.txt': 'one\n', 'b.txt': 'bee\n', 'x.sh': 'echo\n' }
    for (let i = 0; i < 20; i++) files[`lib/f${i}.txt`] = `same ${i}\n`
    makeRepo(path.join(root, 'src'), files)
    const ws = await prepareWorkspace(path.join(root, 'src'), 'HEAD', path.join(root, 'run'))
    // The marker is written until its ctime is past every record: all of them are kept.
    expect(ws.stats.entries.size).toBe(23)
    // And what the object store holds of that tree: the snapshot needs no listing of its own.
    expect([ws.stats.tree, ws.stats.known?.has(ws.tree)]).toEqual([ws.tree, true])
    const p = (n: string): string => path.join(ws.dir, n)
    // a: rewritten in place, same size, mtime put back to the nanosecond.
    execFileSync('touch', ['-r', p('a.txt'), path.join(root, 'stamp')])
    fs.writeFileSync(p('a.txt'), 'TWO\n')
    execFileSync('touch', ['-r', path.join(root, 'stamp'), p('a.txt')])
    // b: replaced by another file of the same size and mtime.
    fs.writeFileSync(p('b.new'), 'BEE\n')
    execFileSync('touch', ['-r', p('b.txt'), p('b.new')])
    fs.renameSync(p('b.new'), p('b.txt'))
    // x.sh: only made executable.
    fs.chmodSync(p('x.sh'), 0o755)

    const snap = await snapshotWorkspace(ws.dir, ws.gitDir, undefined, ws.tree, undefined, ws.stats)
    const diff = await diffTrees(ws.gitDir, ws.tree, snap.tree)
    expect(diff.files.map((f) => [f.path, f.status, f.mode])).toEqual([
      ['a.txt', 'modified', '100644'],
      ['b.txt', 'modified', '100644'],
      ['x.sh', 'modified', '100755']
    ])
    expect(diff.patch.toString()).toContain('+TWO\n')
    expect([snap.read, snap.reused]).toEqual([3, 20])
    // Without the record the result is the same tree.
    const full = await snapshotWorkspace(ws.dir, ws.gitDir, undefined, ws.tree)
    expect([full.tree, full.reused]).toEqual([snap.tree, 0])
  }, 30_000)
})
