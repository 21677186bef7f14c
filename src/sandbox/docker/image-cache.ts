// The agent image across machines: `docker save` of a built image without its bases' layers into
// a file (its format in save-file.ts), the bases provided (pulled by digest) before `docker load`
// of such a file, and the checks a loaded image must pass before it is used.
import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import type Docker from 'dockerode'
import { errorMessage } from '../../errors.js'
import type { ImagePlan } from '../../plan.js'
import { baseImages } from '../dockerfile.js'
import { isEngineError, withDeadline } from '../engine-faults.js'
import type { BaseProvided, ImageBase, LoadedImage } from '../types.js'
import { BUILD_KEY_LABEL, followProgress } from './build.js'
import { contextEntries } from './build-context.js'
import { declaredImages, imagesToRemove, ownLayers, scanImageFile, thinSave } from './save-file.js'

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
export async function imageBuildKey(
  docker: Docker,
  id: string,
  timeoutMs: number
): Promise<string | undefined> {
  const info = await inspectImage(docker, id, timeoutMs)
  return info?.Config?.Labels?.[BUILD_KEY_LABEL] ?? undefined
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
  file: string,
  timeoutMs: number
): Promise<{ buildKey: string; bases: ImageBase[] }> {
  const info = await inspectImage(docker, id, timeoutMs)
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
      const found = await inspectImage(docker, b.ref, timeoutMs)
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

/**
 * Makes sure a base the saved image needs is on the engine as the Dockerfile names it, with the
 * recorded ID: a base pinned by digest that is absent is pulled by that digest (the build would
 * pull it too); one pinned by image ID cannot be fetched. What went wrong is the problem; an
 * engine that does not answer (no HTTP answer at all) throws its fault.
 */
export async function provideBase(
  docker: Docker,
  base: ImageBase,
  timeoutMs: number
): Promise<BaseProvided> {
  let found = await inspectImage(docker, base.ref, timeoutMs)
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
    found = await inspectImage(docker, base.ref, timeoutMs)
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
  expect: { id: string; buildKey: string },
  timeoutMs: number
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
  for (const i of declared.images) if (await inspectImage(docker, i, timeoutMs)) before.add(i)
  const stream = await docker.loadImage(fs.createReadStream(file), { quiet: true })
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(stream, (err: Error | null) => (err ? reject(err) : resolve()))
  })
  const added = imagesToRemove(declared.images, before)
  const info = await inspectImage(docker, expect.id, timeoutMs)
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

/** The image, or undefined when the engine has none by that name; an engine fault throws. */
export async function inspectImage(
  docker: Docker,
  ref: string,
  timeoutMs: number
): Promise<Docker.ImageInspectInfo | undefined> {
  try {
    return await withDeadline(docker.getImage(ref).inspect(), timeoutMs, 'image inspect')
  } catch (error) {
    if (isEngineError(error)) throw error
    return undefined
  }
}
