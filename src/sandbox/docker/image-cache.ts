// The agent image across machines: `docker save` of a built image with its bases into a file,
// `docker load` of such a file, and the checks a loaded image must pass before it is used.
import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import { pipeline } from 'node:stream/promises'
import type Docker from 'dockerode'
import type { ImagePlan } from '../../plan.js'
import { baseImages } from '../dockerfile.js'
import { engineTimeoutMs, isEngineError, withDeadline } from '../engine-faults.js'
import type { LoadedImage } from '../types.js'
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
  h.update('airlock-image-inputs-v1\0')
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

/** Writes `docker save` of the image and of its pinned bases (those this engine has) to `file`. */
export async function saveImage(
  docker: Docker,
  id: string,
  plan: ImagePlan,
  file: string
): Promise<{ buildKey: string; bases: string[] }> {
  const buildKey = await imageBuildKey(docker, id)
  if (buildKey === undefined) throw new Error(`image ${id} has no ${BUILD_KEY_LABEL} label`)
  const bases: string[] = []
  if (plan.kind === 'build') {
    const text = await fs.promises.readFile(plan.dockerfile, 'utf8')
    for (const b of baseImages(text, plan.buildArgs)) {
      if (b.pin !== 'digest' && b.pin !== 'image-id') continue
      const found = await inspect(docker, b.ref)
      if (found) bases.push(found.Id)
    }
  }
  const names = [id, ...new Set(bases)]
  const stream = await (
    docker as unknown as { getImages(o: { names: string[] }): Promise<NodeJS.ReadableStream> }
  ).getImages({ names })
  await pipeline(stream, fs.createWriteStream(file, { mode: 0o600 }))
  return { buildKey, bases: names.slice(1) }
}

/**
 * Loads a `docker save` file and checks that it brought the expected image: its id (a digest of
 * its configuration, which names every layer) and its build key. What the file brought that this
 * engine did not have before is removed again when the check fails.
 */
export async function loadImage(
  docker: Docker,
  file: string,
  expect: { id: string; buildKey: string }
): Promise<LoadedImage> {
  const before = new Set((await docker.listImages({ all: true })).map((i) => i.Id))
  const stream = await docker.loadImage(fs.createReadStream(file), { quiet: true })
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(stream, (err: Error | null) => (err ? reject(err) : resolve()))
  })
  const after = (await docker.listImages({ all: true })).map((i) => i.Id)
  const added = after.filter((i) => !before.has(i))
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
