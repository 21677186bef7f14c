// The file of the image cache: which layers a thin `docker save` file keeps (by the chain IDs the
// engine keys its layers by), the streaming rewrite of a save stream into such a file, and which
// images a save file declares (what a refused load may remove again).
import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import * as tar from 'tar-stream'

/** The chain IDs of a layer stack (what the engine keys its layers by), as moby computes them. */
export function chainIds(diffIds: readonly string[]): string[] {
  const out: string[] = []
  for (const d of diffIds) {
    const parent = out.at(-1)
    out.push(
      parent === undefined
        ? d
        : `sha256:${createHash('sha256').update(`${parent} ${d}`).digest('hex')}`
    )
  }
  return out
}

/**
 * The layers (diff IDs) a thin save file must hold: the image's own, i.e. every layer whose
 * chain (the layer with all below it) is not one the bases already bring.
 */
export function ownLayers(
  image: readonly string[],
  bases: readonly (readonly string[])[]
): Set<string> {
  const provided = new Set(bases.flatMap((b) => chainIds(b)))
  const chains = chainIds(image)
  return new Set(image.filter((_, i) => !provided.has(chains[i])))
}

const SMALL_ENTRY = 16 * 1024 * 1024

/**
 * Rewrites a `docker save` stream into `file`, leaving out every layer file whose content (its
 * diff ID, the sha256 of the uncompressed layer) is not in `keep`. The save stream names its
 * layer files before its manifest, so each layer is spooled to disk while hashed and dropped as
 * soon as it is known to be a base's; the rest of the entries are small and held in memory.
 */
export async function thinSave(
  source: NodeJS.ReadableStream,
  file: string,
  keep: Set<string>
): Promise<void> {
  const spool = await fs.promises.mkdtemp(`${file}.parts-`)
  try {
    type Kept = { header: tar.Header; data?: Buffer; spooled?: string; diffId?: string }
    const entries: Kept[] = []
    const extract = tar.extract()
    const reading = pipeline(source, extract)
    // Awaited below; a loop that stops early must not leave its rejection unhandled.
    reading.catch(() => undefined)
    let n = 0
    for await (const entry of extract) {
      const header = { ...entry.header }
      if (header.type === 'file' && path.posix.basename(header.name) === 'layer.tar') {
        const part = path.join(spool, String(n++))
        const h = createHash('sha256')
        await pipeline(
          entry,
          new Transform({
            transform(chunk: Buffer, _enc, cb) {
              h.update(chunk)
              cb(null, chunk)
            }
          }),
          fs.createWriteStream(part, { mode: 0o600 })
        )
        const diffId = `sha256:${h.digest('hex')}`
        if (keep.has(diffId)) entries.push({ header, spooled: part, diffId })
        else {
          await fs.promises.rm(part)
          entries.push({ header, diffId })
        }
      } else if (header.type === 'file') {
        const chunks: Buffer[] = []
        let size = 0
        for await (const c of entry) {
          size += (c as Buffer).length
          if (size > SMALL_ENTRY) throw new Error(`the save file's ${header.name} is too large`)
          chunks.push(c as Buffer)
        }
        entries.push({ header, data: Buffer.concat(chunks) })
      } else {
        entry.resume()
        entries.push({ header })
      }
    }
    await reading
    const byName = new Map(entries.map((e) => [normalize(e.header.name), e]))
    // Every layer the image needs must be in the file (a symlink to a dropped file is not).
    const present = (e: Kept | undefined, depth = 0): boolean =>
      e !== undefined &&
      (e.header.type === 'symlink' && depth < 8
        ? present(
            byName.get(
              normalize(path.posix.join(path.posix.dirname(e.header.name), e.header.linkname ?? ''))
            ),
            depth + 1
          )
        : e.spooled !== undefined ||
          (e.header.type === 'file' && !e.header.name.endsWith('layer.tar')))
    const pack = tar.pack()
    const writing = pipeline(pack, fs.createWriteStream(file, { mode: 0o600 }))
    writing.catch(() => undefined)
    for (const e of entries) {
      if (e.header.type === 'file' && e.header.name.endsWith('/layer.tar') && !e.spooled) continue
      if (e.header.type === 'symlink' && e.header.name.endsWith('/layer.tar') && !present(e))
        continue
      if (e.spooled !== undefined) {
        const sink = pack.entry(e.header)
        await pipeline(fs.createReadStream(e.spooled), sink)
        await fs.promises.rm(e.spooled)
      } else {
        await new Promise<void>((resolve, reject) =>
          pack.entry(e.header, e.data ?? Buffer.alloc(0), (err) => (err ? reject(err) : resolve()))
        )
      }
    }
    pack.finalize()
    await writing
    const manifest = byName.get('manifest.json')?.data
    if (manifest === undefined) throw new Error('the save stream has no manifest.json')
    const [item] = JSON.parse(manifest.toString('utf8')) as { Layers?: string[] }[]
    for (const layer of item?.Layers ?? []) {
      const e = byName.get(normalize(layer))
      if (e?.diffId !== undefined && keep.has(e.diffId) && !present(e))
        throw new Error(`the thin save file lost layer ${layer}`)
    }
  } finally {
    await fs.promises.rm(spool, { recursive: true, force: true })
  }
}

function normalize(name: string): string {
  return path.posix
    .normalize(name)
    .replace(/^(\.\/)+/, '')
    .replace(/^\/+/, '')
}

/** A save file's manifest (at most this large) and the sha256 of each of its regular files. */
export async function scanImageFile(
  file: string
): Promise<{ manifest?: string; digests: Map<string, string> }> {
  const digests = new Map<string, string>()
  let manifest: string | undefined
  const extract = tar.extract()
  const reading = pipeline(fs.createReadStream(file), extract)
  // Awaited below; a loop that stops early must not leave its rejection unhandled.
  reading.catch(() => undefined)
  for await (const entry of extract) {
    const name = normalize(entry.header.name)
    if (entry.header.type !== 'file') {
      entry.resume()
      continue
    }
    const h = createHash('sha256')
    const chunks: Buffer[] = []
    let size = 0
    for await (const c of entry) {
      h.update(c as Buffer)
      if (name === 'manifest.json') {
        size += (c as Buffer).length
        if (size > 1024 * 1024) throw new Error('its manifest.json is too large')
        chunks.push(c as Buffer)
      }
    }
    digests.set(name, `sha256:${h.digest('hex')}`)
    if (name === 'manifest.json') manifest = Buffer.concat(chunks).toString('utf8')
  }
  await reading
  return { ...(manifest !== undefined ? { manifest } : {}), digests }
}

/**
 * The images `docker load` would create from a save file: the ID of each manifest entry is the
 * digest of its configuration file's content (whatever the file is named). A file without a
 * manifest (the engine's legacy format), or whose manifest names a configuration it does not
 * hold as a regular file, declares nothing the check can trust: a problem.
 */
export function declaredImages(
  manifest: string | undefined,
  digests: ReadonlyMap<string, string>
): { images: string[] } | { problem: string } {
  if (manifest === undefined) return { problem: 'the file has no manifest.json' }
  let items: unknown
  try {
    items = JSON.parse(manifest)
  } catch {
    return { problem: 'its manifest.json is not JSON' }
  }
  if (!Array.isArray(items) || items.length === 0)
    return { problem: 'its manifest.json declares no image' }
  const images: string[] = []
  for (const item of items as { Config?: unknown }[]) {
    const config = typeof item?.Config === 'string' ? normalize(item.Config) : undefined
    const digest = config === undefined ? undefined : digests.get(config)
    if (digest === undefined)
      return { problem: 'its manifest names a configuration it does not hold' }
    images.push(digest)
  }
  return { images: [...new Set(images)] }
}

/** What a refused load removes: the images the file declares that the engine did not have before. */
export function imagesToRemove(
  declared: readonly string[],
  presentBefore: ReadonlySet<string>
): string[] {
  return declared.filter((i) => !presentBefore.has(i))
}
