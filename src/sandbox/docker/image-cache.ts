// The agent image across machines: `docker save` of a built image without its bases' layers into
// a file, the bases provided (pulled by digest) before
// `docker load` of such a file, and the checks a loaded image must pass before it is used.
import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type Docker from 'dockerode'
import * as tar from 'tar-stream'
import { errorMessage } from '../../errors.js'
import type { ImagePlan } from '../../plan.js'
import { baseImages } from '../dockerfile.js'
import { engineTimeoutMs, isEngineError, withDeadline } from '../engine-faults.js'
import type { BaseProvided, ImageBase, LoadedImage } from '../types.js'
import { followProgress } from './build.js'
import { BUILD_KEY_LABEL, contextEntries } from './image.js'

/**
 * The key of a build's inputs that does not depend on what this machine holds: the Dockerfile,
 * the build args, the bases as written, the context's files. Undefined when the image is not
 * built, or a base is not pinned (a tag means different images on different machines).
 */
export async function imageInputsKey(plan: ImagePlan): Promise<string | undefined> {
  if (plan.kind !== 'build') return undefined
  const dockerfile = await fs.promises.readFile(plan.dockerfile)
  const bases = baseImages(dockerfile.toString('utf8'), plan.buildArgs)
  if (bases.some((b) => b.pin === 'unpinned')) return undefined
  const h = createHash('sha256')
  h.update('airlock-image-inputs-v2\0')
  h.update(dockerfile)
  h.update('\0args\0')
  for (const k of Object.keys(plan.buildArgs).sort()) h.update(`${k}=${plan.buildArgs[k]}\0`)
  h.update('\0bases\0' + bases.map((b) => b.ref).join('\0'))
  for (const e of await contextEntries(plan.context)) {
    h.update(`\0${e.rel}\0${e.stat.mode}\0`)
    if (e.stat.isFile()) h.update(await fs.promises.readFile(e.abs))
    else if (e.stat.isSymbolicLink()) h.update(await fs.promises.readlink(e.abs))
  }
  return h.digest('hex')
}

/** The image's build key label (what the build cache looks it up by), if it has one. */
export async function imageBuildKey(docker: Docker, id: string): Promise<string | undefined> {
  const info = await inspect(docker, id)
  return info?.Config?.Labels?.[BUILD_KEY_LABEL] ?? undefined
}

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

/**
 * Writes `docker save` of the image without the layers its pinned bases hold: the image's own
 * layers, its configuration and manifest. `docker load` takes such a file on an engine that has
 * the bases (it loads no layer whose chain it already has). Returns the image's build key and
 * the bases it needs (each pinned base of the Dockerfile, with its image ID here).
 */
export async function saveImage(
  docker: Docker,
  id: string,
  plan: ImagePlan,
  file: string
): Promise<{ buildKey: string; bases: ImageBase[] }> {
  const info = await inspect(docker, id)
  const buildKey = info?.Config?.Labels?.[BUILD_KEY_LABEL] ?? undefined
  if (info === undefined || buildKey === undefined)
    throw new Error(`image ${id} has no ${BUILD_KEY_LABEL} label`)
  const bases: ImageBase[] = []
  const baseLayers: string[][] = []
  if (plan.kind === 'build') {
    const text = await fs.promises.readFile(plan.dockerfile, 'utf8')
    for (const b of baseImages(text, plan.buildArgs)) {
      if (b.pin !== 'digest' && b.pin !== 'image-id') continue
      if (bases.some((x) => x.ref === b.ref)) continue
      const found = await inspect(docker, b.ref)
      if (!found) throw new Error(`base ${b.ref} is not on this engine: nothing saved`)
      bases.push({ ref: b.ref, id: found.Id })
      baseLayers.push(found.RootFS?.Layers ?? [])
    }
  }
  const keep = ownLayers(info.RootFS?.Layers ?? [], baseLayers)
  const stream = await (
    docker as unknown as { getImages(o: { names: string[] }): Promise<NodeJS.ReadableStream> }
  ).getImages({ names: [id] })
  await thinSave(stream, file, keep)
  return { buildKey, bases }
}

const SMALL_ENTRY = 16 * 1024 * 1024

/**
 * Rewrites a `docker save` stream into `file`, leaving out every layer file whose content (its
 * diff ID, the sha256 of the uncompressed layer) is not in `keep`. The save stream names its
 * layer files before its manifest, so each layer is spooled to disk while hashed and dropped as
 * soon as it is known to be a base's; the rest of the entries are small and held in memory.
 */
async function thinSave(
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
async function scanImageFile(
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

/**
 * Makes sure a base the saved image needs is on the engine as the Dockerfile names it, with the
 * recorded ID: a base pinned by digest that is absent is pulled by that digest (the build would
 * pull it too); one pinned by image ID cannot be fetched. What went wrong is the problem; an
 * engine that does not answer (no HTTP answer at all) throws its fault.
 */
export async function provideBase(docker: Docker, base: ImageBase): Promise<BaseProvided> {
  let found = await inspect(docker, base.ref)
  let pulled = false
  if (!found) {
    if (!/@sha256:[a-f0-9]{64}$/.test(base.ref))
      return { ok: false, problem: `base ${base.ref} is not on this engine` }
    try {
      await followProgress(docker, await docker.pull(base.ref), { info: () => undefined })
    } catch (error) {
      const status = (error as { statusCode?: unknown } | null)?.statusCode
      if (isEngineError(error) && typeof status !== 'number') throw error
      return { ok: false, problem: `base ${base.ref} could not be pulled: ${errorMessage(error)}` }
    }
    pulled = true
    found = await inspect(docker, base.ref)
    if (!found)
      return { ok: false, problem: `base ${base.ref} is not on this engine after its pull` }
  }
  if (found.Id !== base.id)
    return {
      ok: false,
      problem: `base ${base.ref} is image ${found.Id.slice(7, 19)} here, the entry was built on ${base.id.slice(7, 19)}`
    }
  return { ok: true, pulled }
}

/**
 * Loads a `docker save` file and checks that it brought the expected image: its id (a digest of
 * its configuration, which names every layer) and its build key. The file must declare that one
 * image and nothing else, or it is not loaded. When the check fails, the image is removed again
 * if the engine did not have it before (never anything else: other runs share the engine).
 */
export async function loadImage(
  docker: Docker,
  file: string,
  expect: { id: string; buildKey: string }
): Promise<LoadedImage> {
  const scan = await scanImageFile(file)
  const declared = declaredImages(scan.manifest, scan.digests)
  if ('problem' in declared)
    return { ok: false, id: expect.id, added: [], problem: declared.problem }
  if (declared.images.length !== 1 || declared.images[0] !== expect.id)
    return {
      ok: false,
      id: expect.id,
      added: [],
      problem: `the file did not hold image ${expect.id.slice(7, 19)} alone`
    }
  const before = new Set<string>()
  for (const i of declared.images) if (await inspect(docker, i)) before.add(i)
  const stream = await docker.loadImage(fs.createReadStream(file), { quiet: true })
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(stream, (err: Error | null) => (err ? reject(err) : resolve()))
  })
  const added = imagesToRemove(declared.images, before)
  const info = await inspect(docker, expect.id)
  const label = info?.Config?.Labels?.[BUILD_KEY_LABEL]
  const problem =
    info === undefined
      ? `the file did not hold image ${expect.id.slice(7, 19)}`
      : label !== expect.buildKey
        ? `image ${expect.id.slice(7, 19)} carries build key ${String(label).slice(0, 12)}, not ${expect.buildKey.slice(0, 12)}`
        : undefined
  if (problem === undefined) return { ok: true, id: expect.id, added }
  for (const i of added) {
    await docker
      .getImage(i)
      .remove({ force: true, noprune: false })
      .catch(() => undefined)
  }
  return { ok: false, id: expect.id, added, problem }
}

async function inspect(docker: Docker, ref: string): Promise<Docker.ImageInspectInfo | undefined> {
  try {
    return await withDeadline(docker.getImage(ref).inspect(), engineTimeoutMs(), 'image inspect')
  } catch (error) {
    if (isEngineError(error)) throw error
    return undefined
  }
}
