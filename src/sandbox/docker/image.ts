// The agent image: a pinned one (pulled when absent), or one built from the Dockerfile, reused
// while its build key (Dockerfile, build args, base image IDs, context) is unchanged.
import * as fs from 'node:fs'
import type Docker from 'dockerode'
import { InfrastructureError, errorMessage } from '../../errors.js'
import type { ImagePlan } from '../../plan.js'
import { sha256 } from '../../plan.js'
import { UnpinnedBaseError, baseImages } from '../dockerfile.js'
import type { ImageInfo, ImageLog } from '../types.js'
import { withBuildLock } from '../build-lock.js'
import { isEngineError, withDeadline } from '../engine-faults.js'
import { BUILD_KEY_LABEL, build, followProgress, pickBuilder } from './build.js'
import type { BuilderEngine } from './build.js'
import { buildKey, contextEntries, isInside } from './build-context.js'
import { inspectImage } from './image-cache.js'
import { resolvePublished } from './published.js'

export { BUILD_KEY_LABEL } from './build.js'
export { contextEntries } from './build-context.js'

export interface ResolveOptions {
  /** Who builds (the run id), written into the build lock. */
  holder?: string
  signal?: AbortSignal
  /** Folder of the build locks (the host's lockDir). */
  lockDir: string
  /** DOCKER_BUILDKIT of the host ('0' asks for the classic builder). */
  buildkit?: string
  /** The deadline of one ordinary engine request (the host's engineTimeoutMs). */
  timeoutMs: number
}

export async function resolveImage(
  docker: Docker,
  plan: ImagePlan,
  log: ImageLog,
  options: ResolveOptions
): Promise<ImageInfo> {
  if (plan.kind === 'pinned') return resolvePinned(docker, plan.ref, log, options.timeoutMs)
  const { published } = plan
  if (published !== undefined)
    return resolvePublished(
      docker,
      { ...plan, published },
      log,
      () => buildImage(docker, plan, log, options),
      options.timeoutMs
    )
  const info = await buildImage(docker, plan, log, options)
  return { ...info, source: info.cached ? 'cache' : 'built' }
}

async function resolvePinned(
  docker: Docker,
  ref: string,
  log: ImageLog,
  timeoutMs: number
): Promise<ImageInfo> {
  const digest = ref.slice(ref.indexOf('@') + 1)
  let inspect = await inspectImage(docker, ref, timeoutMs)
  const found = inspect !== undefined
  if (!inspect) {
    log.info(`pulling ${ref}`)
    try {
      const stream = await docker.pull(ref)
      await followProgress(docker, stream, log)
      inspect = await docker.getImage(ref).inspect()
    } catch (error) {
      throw new InfrastructureError(`cannot pull image ${ref}: ${errorMessage(error)}`, {
        cause: error
      })
    }
  }
  return {
    ref,
    id: inspect.Id,
    baseDigests: [digest],
    cached: true,
    source: found ? 'cache' : 'pulled',
    warnings: []
  }
}

async function buildImage(
  docker: Docker,
  plan: Extract<ImagePlan, { kind: 'build' }>,
  log: ImageLog,
  options: ResolveOptions
): Promise<ImageInfo> {
  const dockerfileText = await fs.promises.readFile(plan.dockerfile)
  const dockerfileSha256 = sha256(dockerfileText)
  const bases = baseImages(dockerfileText.toString('utf8'), plan.buildArgs)
  const warnings: string[] = []
  const unpinned = bases.filter((b) => b.pin === 'unpinned')
  if (unpinned.length > 0) {
    if (!plan.allowUnpinnedBase) throw new UnpinnedBaseError(unpinned)
    warnings.push(
      `unpinned base image allowed by allow-unpinned-base: ${unpinned.map((b) => b.ref).join(', ')}`
    )
  }
  // Resolve what each base really is locally, so a retagged base changes the cache key. A base
  // pinned by digest that is absent is pulled first (the build would pull it anyway, and BuildKit
  // does not keep it as an image): the key then names its ID on every machine, so an image built
  // on one runner is found by its key on another that pulled the same base.
  const baseIds: string[] = []
  for (const b of bases) {
    if (b.pin === 'stage' || b.pin === 'scratch') continue
    let found = await inspectImage(docker, b.ref, options.timeoutMs)
    if (!found && b.pin === 'digest') found = await pullBase(docker, b.ref, log, options.timeoutMs)
    baseIds.push(`${b.ref}=${found?.Id ?? 'absent'}`)
  }
  const entries = await contextEntries(plan.context)
  const inContext = isInside(plan.context, plan.dockerfile)
  const key = await buildKey(dockerfileText, plan.buildArgs, baseIds, entries)
  const baseDigests = bases.flatMap((b) =>
    b.digest ? [b.digest] : b.pin === 'unpinned' ? [b.ref] : []
  )

  const cached = async (): Promise<ImageInfo | undefined> => {
    const existing = await withDeadline(
      docker.listImages({ filters: JSON.stringify({ label: [`${BUILD_KEY_LABEL}=${key}`] }) }),
      options.timeoutMs,
      'list images'
    )
    if (existing.length === 0) return undefined
    log.info(
      `image cache hit (${existing[0].Id.slice(7, 19)}): the Dockerfile, context and build args are unchanged`
    )
    return {
      ref: plan.dockerfile,
      id: existing[0].Id,
      baseDigests,
      dockerfileSha256,
      cached: true,
      warnings
    }
  }
  const hit = await cached()
  if (hit) return hit
  // One build per key at a time on this machine: a concurrent run waits, then reuses the image.
  return withBuildLock(
    key,
    options.holder ?? `pid ${process.pid}`,
    async () => {
      const built = await cached()
      if (built) return built
      const choice = pickBuilder(
        await engineOf(docker, options.timeoutMs),
        bases,
        options.buildkit !== undefined ? { DOCKER_BUILDKIT: options.buildkit } : {}
      )
      const made = await build(
        docker,
        plan,
        log,
        { dockerfileText, entries, inContext, key },
        choice
      )
      return {
        ref: plan.dockerfile,
        id: made.id,
        baseDigests,
        dockerfileSha256,
        cached: false,
        builder: made.builder,
        warnings
      }
    },
    {
      dir: options.lockDir,
      ...(options.signal ? { signal: options.signal } : {}),
      onWait: (h) =>
        log.info(
          `waiting: this image is being built by ${h ? `${h.holder} (pid ${h.pid} on ${h.host}, since ${h.since})` : 'another run'}`
        ),
      onStale: (h) =>
        log.info(`removed a stale build lock${h ? ` of ${h.holder} (pid ${h.pid} is gone)` : ''}`)
    }
  )
}

/**
 * Pulls a base by its digest. A pull the registry refuses is left to the build, which reports
 * it as it does for any base; an engine that does not answer throws its fault.
 */
async function pullBase(
  docker: Docker,
  ref: string,
  log: ImageLog,
  timeoutMs: number
): Promise<Docker.ImageInspectInfo | undefined> {
  log.info(`pulling base ${ref}`)
  try {
    await followProgress(docker, await docker.pull(ref), log)
  } catch (error) {
    const status = (error as { statusCode?: unknown } | null)?.statusCode
    if (isEngineError(error) && typeof status !== 'number') throw error
    log.info(`could not pull base ${ref} (${errorMessage(error)}); the build tries again`)
    return undefined
  }
  return inspectImage(docker, ref, timeoutMs)
}

/** The engine's OS and API version, for the choice of builder. */
async function engineOf(docker: Docker, timeoutMs: number): Promise<BuilderEngine> {
  const v = await withDeadline(docker.version(), timeoutMs, 'version')
  return { os: v.Os ?? null, apiVersion: v.ApiVersion ?? null }
}
