// A preset image its release published (images/published.json): pulled by the digest of its
// multi-platform index, the digest checked on what the engine holds, a mismatch refused. Built
// here instead only when this checkout's preset folder is not the one the release built from (an
// unreleased or edited checkout) or the registry cannot give the image (unreachable, or the image
// is gone): said in the log and recorded in the report.
import type Docker from 'dockerode'
import { InfrastructureError, errorMessage } from '../../errors.js'
import type { ImagePlan } from '../../plan.js'
import { isEngineError } from '../engine-faults.js'
import type { ImageInfo, ImageLog } from '../types.js'
import { followProgress } from './build.js'
import { imageInputsKey, inspectImage } from './image-cache.js'

type BuildPlan = Extract<ImagePlan, { kind: 'build' }>
type Published = NonNullable<BuildPlan['published']>

/** The image a published entry names, pinned by its index digest. */
export const publishedRef = (p: Published): string => `${p.image}@${p.digest}`

/** A pull whose content did not match the digest asked for: never used, never built around. */
export class PublishedImageMismatch extends InfrastructureError {
  constructor(ref: string, detail: string) {
    super(
      `the registry answered ${ref} with content that does not match its digest (${detail}); the image is refused. The registry or the network path to it is not to be trusted: check it, or build the preset locally with build-args (e.g. BASE=the pinned base) to bypass the published image`
    )
    this.name = 'PublishedImageMismatch'
  }
}

// What the engine says when the bytes a registry served do not hash to the digest asked for.
const MISMATCH =
  /digest (did not|does not) match|manifest verification failed|unexpected (manifest )?digest|digest mismatch|verification failed for digest/i

export async function resolvePublished(
  docker: Docker,
  plan: BuildPlan & { published: Published },
  log: ImageLog,
  build: () => Promise<ImageInfo>,
  timeoutMs: number
): Promise<ImageInfo> {
  const pub = plan.published
  const ref = publishedRef(pub)
  const record = {
    image: pub.image,
    digest: pub.digest,
    version: pub.version,
    repository: pub.repository
  }
  const built = async (reason: string, warn: boolean): Promise<ImageInfo> => {
    log.info(`building the preset's image here: ${reason}`)
    const info = await build()
    return {
      ...info,
      source: info.cached ? 'cache' : 'built',
      published: { ...record, used: false, reason },
      warnings: warn ? [...info.warnings, `published image not used: ${reason}`] : info.warnings
    }
  }
  const key = await imageInputsKey(plan)
  if (key !== pub.inputsKey)
    return built(
      `release ${pub.version} published ${ref}, but this checkout's ${plan.dockerfile} and its folder are not what it was built from (an unreleased or changed checkout)`,
      false
    )
  const here = await inspectImage(docker, ref, timeoutMs)
  if (here !== undefined) {
    log.info(`using ${ref} (release ${pub.version}), already on this engine`)
    return info(here, 'cache')
  }
  log.info(`pulling ${ref} (published by release ${pub.version})`)
  try {
    await followProgress(docker, await docker.pull(ref), log)
  } catch (error) {
    const message = errorMessage(error)
    if (MISMATCH.test(message)) throw new PublishedImageMismatch(ref, message)
    const status = (error as { statusCode?: unknown } | null)?.statusCode
    // The engine itself not answering is its fault, not the registry's.
    if (isEngineError(error) && typeof status !== 'number') throw error
    return built(`the registry did not give ${ref}: ${message}`, true)
  }
  const pulled = await inspectImage(docker, ref, timeoutMs)
  if (pulled === undefined)
    throw new PublishedImageMismatch(ref, 'the engine holds no image by that digest after the pull')
  return info(pulled, 'pulled')

  function info(found: Docker.ImageInspectInfo, source: 'pulled' | 'cache'): ImageInfo {
    // The engine files an image pulled by digest under name@digest; anything else is not it.
    if (!(found.RepoDigests ?? []).includes(ref))
      throw new PublishedImageMismatch(
        ref,
        `the engine's image ${found.Id.slice(7, 19)} is filed under ${(found.RepoDigests ?? []).join(', ') || 'no digest'}`
      )
    return {
      ref,
      id: found.Id,
      baseDigests: [pub.digest],
      cached: source === 'cache',
      source,
      published: { ...record, used: true },
      warnings: []
    }
  }
}
