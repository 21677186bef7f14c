// The host folders of a spec travel to the pod as one tar (into the init container's stdin) and
// the writable ones come back as a tar (from `tar -c` in the helper that stays). What comes back
// is the sandbox's output: hostile. It is written only as folders, regular files and symbolic
// links (never followed), each path checked to stay under its root, sizes bounded.
import * as fs from 'node:fs'
import * as path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { PassThrough } from 'node:stream'
import type { Readable } from 'node:stream'
import * as tarStream from 'tar-stream'
import type { MountSpec } from '../types.js'
import type { CopiedMount } from './manifests.js'

/** Packs each mount's source under `<index>/` (a file as `<index>/<its name>`). */
export function packMounts(mounts: MountSpec[], copied: CopiedMount[]): Readable {
  const pack = tarStream.pack()
  const out = new PassThrough()
  pack.on('error', (e) => out.destroy(e))
  pack.pipe(out)
  void (async () => {
    try {
      for (const c of copied) {
        const source = mounts[c.index].source
        const root = String(c.index)
        if (c.file !== undefined) await addFile(pack, source, `${root}/${c.file}`)
        else await addTree(pack, source, root)
      }
      pack.finalize()
    } catch (error) {
      out.destroy(error instanceof Error ? error : new Error(String(error)))
    }
  })()
  return out
}

async function addFile(pack: tarStream.Pack, file: string, name: string): Promise<void> {
  const st = await fs.promises.lstat(file)
  if (st.isSymbolicLink()) {
    pack.entry({ name, type: 'symlink', linkname: await fs.promises.readlink(file), mode: 0o777 })
    return
  }
  if (!st.isFile()) return // FIFOs, sockets, devices: never copied
  const entry = pack.entry({ name, size: st.size, mode: st.mode & 0o777, mtime: st.mtime })
  await pipeline(fs.createReadStream(file), entry)
}

async function addTree(pack: tarStream.Pack, dir: string, name: string): Promise<void> {
  const entries = await fs.promises.readdir(dir, { withFileTypes: true })
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const e of entries) {
    const full = path.join(dir, e.name)
    const inner = `${name}/${e.name}`
    if (e.isDirectory()) {
      const st = await fs.promises.lstat(full)
      pack.entry({ name: inner, type: 'directory', mode: st.mode & 0o777, mtime: st.mtime })
      await addTree(pack, full, inner)
    } else {
      await addFile(pack, full, inner)
    }
  }
}

export interface UnpackLimits {
  maxBytes: number
  maxEntries: number
}

/**
 * Replaces `root`'s content with the tar's (as `tar -c -C dir .` writes it). Entries that are not
 * folders, regular files or symbolic links are skipped and counted; a path that leaves the root
 * (absolute, `..`, through a symbolic link the tar itself made) or passes a bound throws.
 */
export async function unpackInto(
  tar: Readable,
  root: string,
  limits: UnpackLimits
): Promise<{ entries: number; bytes: number; skipped: number }> {
  await fs.promises.rm(root, { recursive: true, force: true })
  await fs.promises.mkdir(root, { recursive: true })
  const extract = tarStream.extract()
  let entries = 0
  let bytes = 0
  let skipped = 0
  const symlinks = new Set<string>()
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, stream, next) => {
      const fail = (error: Error): void => {
        stream.resume()
        extract.destroy(error)
      }
      entries++
      if (entries > limits.maxEntries)
        return fail(new Error(`more than ${limits.maxEntries} entries`))
      const rel = path.posix.normalize(header.name).replace(/\/+$/, '')
      if (rel === '.' || rel === '') {
        stream.resume()
        return next()
      }
      if (path.posix.isAbsolute(rel) || rel === '..' || rel.startsWith('../'))
        return fail(new Error(`entry "${header.name}" leaves the folder`))
      // No entry may sit under a symbolic link an earlier entry made (it would write through it).
      const parts = rel.split('/')
      for (let i = 1; i < parts.length; i++) {
        if (symlinks.has(parts.slice(0, i).join('/')))
          return fail(new Error(`entry "${header.name}" is under a symbolic link`))
      }
      const target = path.join(root, ...parts)
      const mode = (header.mode ?? 0o644) & 0o777
      void (async () => {
        if (header.type === 'directory') {
          await fs.promises.mkdir(target, { recursive: true, mode: mode | 0o700 })
          stream.resume()
        } else if (header.type === 'file' || header.type === 'contiguous-file') {
          bytes += header.size ?? 0
          if (bytes > limits.maxBytes) throw new Error(`more than ${limits.maxBytes} bytes`)
          await fs.promises.mkdir(path.dirname(target), { recursive: true })
          await pipeline(stream, fs.createWriteStream(target, { flags: 'wx', mode }))
        } else if (header.type === 'symlink' && header.linkname !== undefined) {
          await fs.promises.mkdir(path.dirname(target), { recursive: true })
          await fs.promises.symlink(header.linkname, target)
          symlinks.add(rel)
          stream.resume()
        } else {
          skipped++
          stream.resume()
        }
      })().then(
        () => next(),
        (error: unknown) => fail(error instanceof Error ? error : new Error(String(error)))
      )
    })
    extract.on('finish', resolve)
    extract.on('error', reject)
  })
  tar.on('error', (e) => extract.destroy(e))
  tar.pipe(extract)
  await done
  return { entries, bytes, skipped }
}
