// The dependency cache's folders: the install works in a folder on the run's bounded filesystem;
// a store that restores only at a fixed path (the Actions cache) stages there and the entry is
// copied across; every folder is gone after the close.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { openDepsCache } from '../../src/cache/caches.js'
import { FolderStore, copyTree } from '../../src/cache/store.js'
import type { CacheStore } from '../../src/cache/store.js'

const quiet = { info: (): void => undefined, warn: (): void => undefined }
const facts = {
  lockfiles: [{ path: 'package-lock.json', sha256: 'a'.repeat(64) }],
  command: 'npm ci',
  image: 'b'.repeat(64),
  network: [] as string[]
}
let tmp: string
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-deps-cache-'))
})
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }))

/** A store bound to the path it saved from, keeping what it saw at each call. */
class PathBoundStore implements CacheStore {
  readonly kind = 'actions' as const
  readonly pathBound = true
  readonly entries = new Map<string, { at: string; files: Record<string, string> }>()
  restoredAt: string[] = []
  async restore(dir: string, key: string): Promise<string | undefined> {
    this.restoredAt.push(dir)
    await fs.promises.rm(dir, { recursive: true, force: true })
    await fs.promises.mkdir(dir, { recursive: true })
    const e = this.entries.get(key)
    if (!e || e.at !== dir) return undefined
    for (const [f, text] of Object.entries(e.files)) fs.writeFileSync(path.join(dir, f), text)
    return key
  }
  async save(dir: string, key: string): Promise<'saved' | 'exists'> {
    const files = Object.fromEntries(
      fs.readdirSync(dir).map((f) => [f, fs.readFileSync(path.join(dir, f), 'utf8')])
    )
    this.entries.set(key, { at: dir, files })
    return 'saved'
  }
}

test('a path-bound store restores and saves at the staging path; the install works elsewhere', async () => {
  const store = new PathBoundStore()
  const dirs = { work: path.join(tmp, 'scratch', 'deps-cache'), staging: path.join(tmp, 'stage') }
  const cold = await openDepsCache(store, 'base', dirs, facts, quiet)
  expect(cold.dir).toBe(dirs.work)
  expect(cold.use.restored).toBeNull()
  fs.writeFileSync(path.join(cold.dir, 'pkg.tgz'), 'tarball')
  const closed = await cold.close(true)
  expect(closed.saved).toBe('saved')
  expect([...store.entries.values()][0]).toEqual({
    at: dirs.staging,
    files: { 'pkg.tgz': 'tarball' }
  })
  expect(fs.existsSync(dirs.work)).toBe(false)
  expect(fs.existsSync(dirs.staging)).toBe(false)

  const warm = await openDepsCache(store, 'base', dirs, facts, quiet)
  expect(store.restoredAt).toEqual([dirs.staging, dirs.staging])
  expect(warm.use.restored).toBe(closed.key)
  expect(fs.readFileSync(path.join(dirs.work, 'pkg.tgz'), 'utf8')).toBe('tarball')
  expect(fs.existsSync(dirs.staging)).toBe(false)
  expect((await warm.close(true)).saved).toBe('exists')
  expect(fs.existsSync(dirs.work)).toBe(false)
})

test('a folder store restores straight into the work folder; a failed install saves nothing', async () => {
  const store = new FolderStore(path.join(tmp, 'store'))
  const dirs = { work: path.join(tmp, 'work'), staging: path.join(tmp, 'stage') }
  const first = await openDepsCache(store, 'local-aaaa', dirs, facts, quiet)
  fs.writeFileSync(path.join(first.dir, 'a'), 'one')
  expect((await first.close(false)).saved).toBe('skipped')
  expect(fs.existsSync(dirs.work)).toBe(false)
  const second = await openDepsCache(store, 'local-aaaa', dirs, facts, quiet)
  expect(second.use.restored).toBeNull()
  fs.writeFileSync(path.join(second.dir, 'a'), 'two')
  expect((await second.close(true)).saved).toBe('saved')
  const third = await openDepsCache(store, 'local-aaaa', dirs, facts, quiet)
  expect(third.use.restored).not.toBeNull()
  expect(fs.readFileSync(path.join(dirs.work, 'a'), 'utf8')).toBe('two')
  expect(fs.existsSync(dirs.staging)).toBe(false)
  await third.close(true)
})

test('copyTree keeps links as links and modes, and never reads a FIFO', async () => {
  const src = path.join(tmp, 'src')
  fs.mkdirSync(path.join(src, 'd'), { recursive: true })
  fs.writeFileSync(path.join(src, 'd', 'x'), 'x')
  fs.chmodSync(path.join(src, 'd', 'x'), 0o751)
  fs.symlinkSync('/etc/hostname', path.join(src, 'out'))
  const { execFileSync } = await import('node:child_process')
  execFileSync('mkfifo', [path.join(src, 'pipe')])
  const dst = path.join(tmp, 'dst')
  fs.mkdirSync(dst)
  await copyTree(src, dst)
  expect(fs.readlinkSync(path.join(dst, 'out'))).toBe('/etc/hostname')
  expect(fs.statSync(path.join(dst, 'd', 'x')).mode & 0o777).toBe(0o751)
  expect(fs.lstatSync(path.join(dst, 'pipe')).isFIFO()).toBe(true)
})
