// The build context: the files `.dockerignore` keeps, the build key over them (what decides a
// cache hit), and the tar stream sent to the engine.
import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import dockerignoreModule from '@balena/dockerignore'
import * as tar from 'tar-stream'

// The package is CommonJS (`module.exports = factory`) while its types declare a default export.
type IgnoreFactory = (typeof dockerignoreModule)['default']
const dockerignore: IgnoreFactory =
  (dockerignoreModule as { default?: IgnoreFactory }).default ??
  (dockerignoreModule as unknown as IgnoreFactory)

/** The name an out-of-context Dockerfile gets inside the context sent to the engine. */
export const DOCKERFILE_IN_CONTEXT = '.airlock.Dockerfile'

export interface ContextEntry {
  rel: string
  abs: string
  stat: fs.Stats
}

export function isInside(dir: string, file: string): boolean {
  const rel = path.relative(dir, file)
  return !rel.startsWith('..') && !path.isAbsolute(rel)
}

export function toPosix(p: string): string {
  return p.split(path.sep).join('/')
}

/** Every file of the build context that `.dockerignore` does not exclude, in a stable order. */
export async function contextEntries(root: string): Promise<ContextEntry[]> {
  let patterns: string[] = []
  try {
    patterns = (await fs.promises.readFile(path.join(root, '.dockerignore'), 'utf8')).split(/\r?\n/)
  } catch {
    patterns = []
  }
  const ig = dockerignore({ ignorecase: false }).add(patterns)
  const hasExceptions = patterns.some((p) => p.trim().startsWith('!'))
  const out: ContextEntry[] = []
  const walk = async (dir: string): Promise<void> => {
    const names = (await fs.promises.readdir(dir)).sort()
    for (const name of names) {
      const abs = path.join(dir, name)
      const rel = toPosix(path.relative(root, abs))
      const stat = await fs.promises.lstat(abs)
      const ignored = ig.ignores(rel)
      if (stat.isDirectory()) {
        if (ignored && !hasExceptions) continue
        if (!ignored) out.push({ rel, abs, stat })
        await walk(abs)
      } else if (!ignored && (stat.isFile() || stat.isSymbolicLink())) {
        out.push({ rel, abs, stat })
      }
    }
  }
  await walk(root)
  return out
}

export async function buildKey(
  dockerfile: Buffer,
  buildArgs: Record<string, string>,
  baseIds: string[],
  entries: ContextEntry[]
): Promise<string> {
  const h = createHash('sha256')
  h.update('airlock-build-key-v1\0')
  h.update(dockerfile)
  h.update('\0args\0')
  for (const k of Object.keys(buildArgs).sort()) h.update(`${k}=${buildArgs[k]}\0`)
  h.update('\0bases\0' + baseIds.join('\0'))
  for (const e of entries) {
    h.update(`\0${e.rel}\0${e.stat.mode}\0`)
    if (e.stat.isFile()) h.update(await fs.promises.readFile(e.abs))
    else if (e.stat.isSymbolicLink()) h.update(await fs.promises.readlink(e.abs))
  }
  return h.digest('hex')
}

export function packContext(
  entries: ContextEntry[],
  externalDockerfile: Buffer | undefined
): tar.Pack {
  const pack = tar.pack()
  void (async () => {
    try {
      for (const e of entries) {
        // A body nobody reads any more (a refused request, a finished build) stops reading files.
        if (pack.destroyed) return
        const header = {
          name: e.rel,
          mode: e.stat.mode & 0o7777,
          mtime: new Date(0),
          uid: 0,
          gid: 0
        }
        if (e.stat.isDirectory()) {
          pack.entry({ ...header, type: 'directory' })
        } else if (e.stat.isSymbolicLink()) {
          pack.entry({ ...header, type: 'symlink', linkname: await fs.promises.readlink(e.abs) })
        } else {
          pack.entry(header, await fs.promises.readFile(e.abs))
        }
      }
      if (externalDockerfile) {
        pack.entry(
          { name: DOCKERFILE_IN_CONTEXT, mode: 0o644, mtime: new Date(0) },
          externalDockerfile
        )
      }
      pack.finalize()
    } catch (error) {
      if (!pack.destroyed) pack.destroy(error as Error)
    }
  })()
  return pack
}
