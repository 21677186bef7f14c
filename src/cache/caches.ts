// The two caches of a run, over a CacheStore: the dependency cache of the install phase and the
// agent image across machines. Each is best effort: a cache that cannot be read or written costs
// time, never the run.
import * as fs from 'node:fs'
import * as path from 'node:path'
import { errorMessage } from '../errors.js'
import type { ImagePlan } from '../sandbox/types.js'
import type { CacheUse } from './record.js'
import type { ImageBase, ImageInfo, Runtime } from '../sandbox/types.js'
import { baseImages } from '../sandbox/dockerfile.js'
import { isEngineError } from '../sandbox/engine-faults.js'
import { dependencyCacheKeys, imageCacheKeys, restorable } from './keys.js'
import type { CacheScope, DepsFacts } from './keys.js'
import { copyTree } from './store.js'
import type { CacheStore } from './store.js'

export interface CacheLog {
  info(line: string): void
  warn(line: string): void
}

/** Where the install phase sees the dependency cache, and what tells the package managers. */
export const CACHE_MOUNT = '/airlock/cache'
export const CACHE_ENV: readonly string[] = [
  `AIRLOCK_CACHE_DIR=${CACHE_MOUNT}`,
  `npm_config_cache=${CACHE_MOUNT}/npm`,
  // Content the lockfile pins is taken from the cache without asking the registry again.
  'npm_config_prefer_offline=true',
  `YARN_CACHE_FOLDER=${CACHE_MOUNT}/yarn`,
  `PIP_CACHE_DIR=${CACHE_MOUNT}/pip`,
  `GOMODCACHE=${CACHE_MOUNT}/go-mod`
]

/** A dependency cache opened for one install phase: the folder to mount, and how to close it. */
export interface OpenDepsCache {
  dir: string
  use: CacheUse
  /** After a successful install: writes the entry unless this exact key was restored. */
  close(succeeded: boolean): Promise<CacheUse>
}

/**
 * Opens the dependency cache for an install phase. `dirs.work` is the folder the phase mounts
 * (on the run's bounded filesystem: an install cannot write past `workspace-size` through it);
 * `dirs.staging` is the fixed path a path-bound store (the Actions cache) restores and saves at.
 */
export async function openDepsCache(
  store: CacheStore,
  scope: CacheScope,
  dirs: { work: string; staging: string },
  facts: DepsFacts,
  log: CacheLog
): Promise<OpenDepsCache> {
  const keys = dependencyCacheKeys(scope, facts)
  const dir = dirs.work
  const at = store.pathBound ? dirs.staging : dir
  let restored = await store.restore(at, keys.key, keys.restoreKeys).catch((e: unknown) => {
    log.warn(`dependency cache: restore failed (${errorMessage(e)}); the install starts cold`)
    return undefined
  })
  if (restored !== undefined && !restorable('deps', scope, restored)) {
    // The backend answered with an entry of another scope: never used.
    log.warn(`dependency cache: refused ${restored}, an entry of another scope`)
    restored = undefined
  }
  await fs.promises.mkdir(dir, { recursive: true })
  if (at !== dir) {
    if (restored !== undefined) await copyTree(at, dir)
    await fs.promises.rm(at, { recursive: true, force: true })
  } else if (restored === undefined) {
    await fs.promises.rm(dir, { recursive: true, force: true })
    await fs.promises.mkdir(dir, { recursive: true })
  }
  log.info(
    restored === undefined
      ? `dependency cache (${store.kind}): no entry for ${keys.key}; the install starts cold`
      : `dependency cache (${store.kind}): restored ${restored}`
  )
  const use: CacheUse = {
    store: store.kind,
    key: keys.key,
    restored: restored ?? null,
    saved: 'skipped'
  }
  return {
    dir,
    use,
    async close(succeeded) {
      try {
        if (!succeeded) return { ...use, detail: 'the install failed: nothing saved' }
        if (restored === keys.key) return { ...use, saved: 'exists' }
        try {
          if (at !== dir) {
            await fs.promises.rm(at, { recursive: true, force: true })
            await fs.promises.mkdir(at, { recursive: true })
            await copyTree(dir, at)
          }
          const saved = await store.save(at, keys.key)
          log.info(
            `dependency cache: ${saved === 'saved' ? 'saved' : 'kept the existing'} ${keys.key}`
          )
          return { ...use, saved }
        } catch (error) {
          log.warn(`dependency cache: save failed (${errorMessage(error)})`)
          return { ...use, saved: 'failed', detail: errorMessage(error) }
        }
      } finally {
        for (const d of new Set([dir, at]))
          await fs.promises.rm(d, { recursive: true, force: true }).catch(() => undefined)
      }
    }
  }
}

const IMAGE_FILE = 'image.tar'
const META_FILE = 'image.json'

interface ImageMeta {
  inputsKey: string
  id: string
  buildKey: string
  /** The bases the image needs on the engine (their layers are not in the file). */
  bases: ImageBase[]
}

const IMAGE_ID = /^sha256:[a-f0-9]{64}$/

/** The Dockerfile's bases pinned by digest or image ID, as written, each once. */
async function pinnedBases(plan: Extract<ImagePlan, { kind: 'build' }>): Promise<string[]> {
  const text = await fs.promises.readFile(plan.dockerfile, 'utf8')
  const refs = baseImages(text, plan.buildArgs)
    .filter((b) => b.pin === 'digest' || b.pin === 'image-id')
    .map((b) => b.ref)
  return [...new Set(refs)]
}

function readMeta(text: string, inputsKey: string): ImageMeta {
  const meta = JSON.parse(text) as Partial<ImageMeta>
  if (
    meta.inputsKey !== inputsKey ||
    typeof meta.id !== 'string' ||
    !IMAGE_ID.test(meta.id) ||
    typeof meta.buildKey !== 'string' ||
    !/^[a-f0-9]{64}$/.test(meta.buildKey) ||
    !Array.isArray(meta.bases) ||
    !meta.bases.every(
      (b: Partial<ImageBase> | null) =>
        typeof b?.ref === 'string' &&
        typeof b.id === 'string' &&
        IMAGE_ID.test(b.id) &&
        // A base pinned by image ID is that image; one pinned by digest is named by its digest.
        (IMAGE_ID.test(b.ref) ? b.ref === b.id : /@sha256:[a-f0-9]{64}$/.test(b.ref))
    )
  )
    throw new Error('the entry is not for these build inputs')
  return { inputsKey, id: meta.id, buildKey: meta.buildKey, bases: meta.bases }
}

/**
 * Before the image is resolved: on a machine without the image, provides the bases the saved
 * image needs (a base pinned by digest is pulled by it), then loads the image saved under the
 * same build inputs, checked (image id and build key as recorded, else removed and not used).
 * The image build then finds it by its build key, as if it had built it here.
 */
export async function restoreImage(
  runtime: Runtime,
  store: CacheStore,
  scope: CacheScope,
  plan: ImagePlan,
  dir: string,
  log: CacheLog
): Promise<{ use: CacheUse; meta: ImageMeta | undefined } | undefined> {
  if (!runtime.imageInputsKey || !runtime.loadImage || !runtime.imageBuildKey) return undefined
  const inputsKey = await runtime.imageInputsKey(plan)
  if (inputsKey === undefined) return undefined
  const keys = imageCacheKeys(scope, inputsKey)
  const use: CacheUse = { store: store.kind, key: keys.key, restored: null, saved: 'skipped' }
  const metaDir = path.join(dir, 'meta')
  const found = await store.restore(metaDir, `${keys.key}-meta`, []).catch(() => undefined)
  if (found === undefined || !restorable('image', scope, found))
    return { use: { ...use, detail: 'no entry' }, meta: undefined }
  let meta: ImageMeta
  try {
    meta = readMeta(await fs.promises.readFile(path.join(metaDir, META_FILE), 'utf8'), inputsKey)
    // The bases are the Dockerfile's own pinned ones: a record cannot make a runner pull others.
    const refs = plan.kind === 'build' ? await pinnedBases(plan) : []
    if (meta.bases.map((b) => b.ref).join('\0') !== refs.join('\0'))
      throw new Error("its bases are not the Dockerfile's")
  } catch (error) {
    log.warn(`image cache: ignored an unreadable entry (${errorMessage(error)})`)
    return { use: { ...use, detail: 'unreadable entry' }, meta: undefined }
  }
  // An engine that does not answer is the run's fault (infrastructure-error), never a cache miss.
  if ((await runtime.imageBuildKey(meta.id)) === meta.buildKey) {
    log.info(`image cache: ${meta.id.slice(7, 19)} is already on this engine`)
    return { use: { ...use, detail: 'already present' }, meta }
  }
  // The file holds the image's own layers only: its bases must be on the engine first, pulled by
  // their digest (content-addressed: the registry cannot answer with anything else) when absent.
  for (const base of meta.bases) {
    const provided = runtime.provideBase
      ? await runtime.provideBase(base)
      : { ok: false as const, problem: 'this engine cannot provide bases' }
    if (!provided.ok) {
      log.warn(`image cache: not restored (${provided.problem}); building`)
      return { use: { ...use, detail: provided.problem }, meta: undefined }
    }
    if (provided.pulled) log.info(`image cache: pulled base ${base.ref}`)
  }
  // A store that keeps its entries on this machine: the file is loaded where it lies, no copy.
  const inPlace = await store.readInPlace?.(keys.key).catch(() => undefined)
  const tarDir = inPlace ?? path.join(dir, 'image')
  const got =
    inPlace !== undefined
      ? keys.key
      : await store.restore(tarDir, keys.key, []).catch(() => undefined)
  if (got === undefined) return { use: { ...use, detail: 'no image file' }, meta: undefined }
  const loaded = await runtime
    .loadImage(path.join(tarDir, IMAGE_FILE), meta)
    .catch((e: unknown) => {
      // The engine lost (connection dropped, no answer): the run's fault. The engine refusing
      // the file (an HTTP error about its content): a refused entry, and the image is built.
      if (lostEngine(e)) throw e
      return { ok: false, problem: errorMessage(e), added: [] as string[] }
    })
  if (inPlace === undefined) await fs.promises.rm(tarDir, { recursive: true, force: true })
  if (!loaded.ok) {
    log.warn(`image cache: refused the restored image (${loaded.problem ?? 'unknown'}); building`)
    return { use: { ...use, detail: `refused: ${loaded.problem ?? 'unknown'}` }, meta: undefined }
  }
  log.info(`image cache: loaded ${meta.id.slice(7, 19)} from ${got}`)
  return { use: { ...use, restored: got }, meta }
}

/** After the image is resolved: a run that may write saves an image the cache did not have. */
export async function saveImage(
  runtime: Runtime,
  store: CacheStore,
  scope: CacheScope,
  plan: ImagePlan,
  image: ImageInfo,
  restored: { use: CacheUse; meta: ImageMeta | undefined },
  dir: string,
  log: CacheLog
): Promise<CacheUse> {
  const use = restored.use
  const inputsKey = await runtime.imageInputsKey?.(plan)
  if (!runtime.saveImage || inputsKey === undefined) return use
  const keys = imageCacheKeys(scope, inputsKey)
  if (!keys.writable) return { ...use, detail: `${use.detail ?? ''} (this run does not write)` }
  if (restored.meta?.id === image.id) return { ...use, saved: 'exists' }
  const tarDir = path.join(dir, 'image')
  const metaDir = path.join(dir, 'meta')
  try {
    await fs.promises.rm(tarDir, { recursive: true, force: true })
    await fs.promises.mkdir(tarDir, { recursive: true })
    const saved = await runtime.saveImage(image.id, plan, path.join(tarDir, IMAGE_FILE))
    const meta: ImageMeta = {
      inputsKey,
      id: image.id,
      buildKey: saved.buildKey,
      bases: saved.bases
    }
    // The image first, its record last: a record always names an entry that exists.
    const outcome = await store.save(tarDir, keys.key, { move: true })
    await fs.promises.rm(metaDir, { recursive: true, force: true })
    await fs.promises.mkdir(metaDir, { recursive: true })
    await fs.promises.writeFile(path.join(metaDir, META_FILE), JSON.stringify(meta))
    await store.save(metaDir, `${keys.key}-meta`)
    log.info(`image cache: ${outcome === 'saved' ? 'saved' : 'kept the existing'} ${keys.key}`)
    return { ...use, saved: outcome }
  } catch (error) {
    if (lostEngine(error)) throw error
    log.warn(`image cache: save failed (${errorMessage(error)})`)
    return { ...use, saved: 'failed', detail: errorMessage(error) }
  } finally {
    await fs.promises.rm(tarDir, { recursive: true, force: true }).catch(() => undefined)
    await fs.promises.rm(metaDir, { recursive: true, force: true }).catch(() => undefined)
  }
}

/** A lost engine (connection or deadline), as opposed to an HTTP answer refusing a request. */
function lostEngine(error: unknown): boolean {
  const status = (error as { statusCode?: unknown } | null)?.statusCode
  return isEngineError(error) && typeof status !== 'number'
}
