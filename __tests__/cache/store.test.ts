// The machine's folder store: entries read in place, a folder given up moved in rather than copied.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { FolderStore } from '../../src/cache/store.js'

let tmp: string
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-store-'))
})
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }))

function folder(name: string, files: Record<string, string>): string {
  const dir = path.join(tmp, name)
  fs.mkdirSync(dir, { recursive: true })
  for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), text)
  return dir
}

test('a folder given up is moved in (same inode), one kept by its caller is copied', async () => {
  const store = new FolderStore(path.join(tmp, 'store'))
  const given = folder('given', { 'image.tar': 'layers' })
  const inode = fs.statSync(path.join(given, 'image.tar')).ino
  expect(await store.save(given, 'k-moved', { move: true })).toBe('saved')
  expect(fs.existsSync(given)).toBe(false)
  const entry = await store.readInPlace('k-moved')
  expect(entry).toBe(path.join(tmp, 'store', 'k-moved'))
  expect(fs.statSync(path.join(entry!, 'image.tar')).ino).toBe(inode)

  const kept = folder('kept', { a: 'one' })
  expect(await store.save(kept, 'k-copied')).toBe('saved')
  expect(fs.readFileSync(path.join(kept, 'a'), 'utf8')).toBe('one')
  const copy = await store.readInPlace('k-copied')
  expect(fs.statSync(path.join(copy!, 'a')).ino).not.toBe(fs.statSync(path.join(kept, 'a')).ino)
})

test('an existing entry is never replaced, moved or not', async () => {
  const store = new FolderStore(path.join(tmp, 'store'))
  await store.save(folder('first', { a: 'first' }), 'k')
  expect(await store.save(folder('second', { a: 'second' }), 'k', { move: true })).toBe('exists')
  expect(fs.readFileSync(path.join((await store.readInPlace('k'))!, 'a'), 'utf8')).toBe('first')
})

test('readInPlace: only an entry that exists, by a valid key', async () => {
  const store = new FolderStore(path.join(tmp, 'store'))
  expect(await store.readInPlace('absent')).toBeUndefined()
  await store.save(folder('x', { a: 'x' }), 'present')
  expect(await store.readInPlace('../store/present')).toBeUndefined()
  fs.writeFileSync(path.join(tmp, 'store', 'a-file'), '')
  expect(await store.readInPlace('a-file')).toBeUndefined()
})
