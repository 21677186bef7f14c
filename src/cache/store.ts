// Where cache entries are kept: a folder on the machine (the CLI), or the Actions cache (GitHub's
// own `@actions/cache` client, in actions-store.ts: the CLI never loads it). Entries are
// immutable: the first writer of a key wins.
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { promisify } from 'node:util'

const execFileP = promisify(execFile)

export interface CacheStore {
  /** `folder` or `actions`, for the log and the report. */
  readonly kind: 'folder' | 'actions'
  /**
   * True when an entry can be restored only at the path it was saved from (the Actions cache:
   * the path is part of the entry's version), so a caller stages it at one fixed path.
   */
  readonly pathBound: boolean
  /**
   * Restores an entry into `dir` (emptied first): `key` exactly, else the newest entry whose key
   * starts with one of `restoreKeys`, in order. Returns the key found, or undefined.
   */
  restore(dir: string, key: string, restoreKeys: string[]): Promise<string | undefined>
  /**
   * Saves `dir` under `key`; an existing entry of that key is kept as it is. With `move`, the
   * caller gives `dir` up (it is removed or emptied either way): a store may take it as it is.
   */
  save(dir: string, key: string, options?: { move?: boolean }): Promise<'saved' | 'exists'>
  /**
   * The folder of the entry `key`, to read in place without a copy, where the store keeps its
   * entries as folders on this machine (undefined: no such entry, or a store that cannot).
   * Nothing may write to it.
   */
  readInPlace?(key: string): Promise<string | undefined>
}

const KEY = /^[A-Za-z0-9._-]{1,200}$/

/** Entries as folders `<root>/<key>/`, written whole under a temporary name, then renamed. */
export class FolderStore implements CacheStore {
  readonly kind = 'folder' as const
  readonly pathBound = false
  constructor(private readonly root: string) {}

  async restore(dir: string, key: string, restoreKeys: string[]): Promise<string | undefined> {
    await empty(dir)
    const found = await this.find(key, restoreKeys)
    if (found === undefined) return undefined
    await copyTree(path.join(this.root, found), dir)
    return found
  }

  async save(
    dir: string,
    key: string,
    options: { move?: boolean } = {}
  ): Promise<'saved' | 'exists'> {
    if (!KEY.test(key)) throw new Error(`not a cache key: ${key}`)
    const target = path.join(this.root, key)
    if (fs.existsSync(target)) return 'exists'
    await fs.promises.mkdir(this.root, { recursive: true, mode: 0o700 })
    const partial = path.join(this.root, `.partial-${randomBytes(6).toString('hex')}`)
    try {
      // A folder given up on the same filesystem is renamed in, not copied (EXDEV: copied).
      const moved =
        options.move === true &&
        (await fs.promises.rename(dir, partial).then(
          () => true,
          () => false
        ))
      if (!moved) {
        await fs.promises.mkdir(partial, { mode: 0o700 })
        await copyTree(dir, partial)
      }
      await fs.promises.rename(partial, target)
      return 'saved'
    } catch (error) {
      await fs.promises.rm(partial, { recursive: true, force: true })
      if (fs.existsSync(target)) return 'exists'
      throw error
    }
  }

  async readInPlace(key: string): Promise<string | undefined> {
    if (!KEY.test(key)) return undefined
    const dir = path.join(this.root, key)
    const st = await fs.promises.lstat(dir).catch(() => undefined)
    return st?.isDirectory() === true ? dir : undefined
  }

  private async find(key: string, restoreKeys: string[]): Promise<string | undefined> {
    let names: string[]
    try {
      names = (await fs.promises.readdir(this.root)).filter((n) => KEY.test(n))
    } catch {
      return undefined
    }
    if (names.includes(key)) return key
    for (const prefix of restoreKeys) {
      const matching = names.filter((n) => n.startsWith(prefix))
      if (matching.length === 0) continue
      const dated = await Promise.all(
        matching.map(async (n) => ({
          n,
          t: (await fs.promises.stat(path.join(this.root, n))).mtimeMs
        }))
      )
      return dated.sort((a, b) => b.t - a.t)[0].n
    }
    return undefined
  }
}

/** `dir` made empty (created when missing). */
export async function empty(dir: string): Promise<void> {
  await fs.promises.rm(dir, { recursive: true, force: true })
  await fs.promises.mkdir(dir, { recursive: true })
}

/**
 * Copies the contents of `src` into the existing folder `dst`: symbolic links as links (never
 * followed), special files as what they are (never read), modes and times kept, ownership not.
 * GNU `cp` where there is one: a folder of thousands of small files (a package cache) copies
 * several times faster than with Node's own `fs.cp`.
 */
export async function copyTree(src: string, dst: string): Promise<void> {
  if (process.platform === 'linux') {
    await execFileP(
      'cp',
      ['-R', '--no-dereference', '--preserve=mode,timestamps,links', '--', `${src}/.`, dst],
      { maxBuffer: 1024 * 1024 }
    )
    return
  }
  await fs.promises.cp(src, dst, {
    recursive: true,
    verbatimSymlinks: true,
    preserveTimestamps: true
  })
}
