import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import type Docker from 'dockerode'
import dockerignoreModule from '@balena/dockerignore'
import * as tar from 'tar-stream'
import { ConfigurationError, InfrastructureError, errorMessage } from '../../errors.js'
import type { ImagePlan } from '../../plan.js'
import { sha256 } from '../../plan.js'
import { UnpinnedBaseError, baseImages } from '../dockerfile.js'
import type { ImageInfo, ImageLog } from '../types.js'

// The package is CommonJS (`module.exports = factory`) while its types declare a default export.
type IgnoreFactory = (typeof dockerignoreModule)['default']
const dockerignore: IgnoreFactory =
  (dockerignoreModule as { default?: IgnoreFactory }).default ??
  (dockerignoreModule as unknown as IgnoreFactory)

export const BUILD_KEY_LABEL = 'dev.airlock.build-key'
const DOCKERFILE_IN_CONTEXT = '.airlock.Dockerfile'

export async function resolveImage(
  docker: Docker,
  plan: ImagePlan,
  log: ImageLog
): Promise<ImageInfo> {
  if (plan.kind === 'pinned') return resolvePinned(docker, plan.ref, log)
  return buildImage(docker, plan, log)
}

async function resolvePinned(docker: Docker, ref: string, log: ImageLog): Promise<ImageInfo> {
  const digest = ref.slice(ref.indexOf('@') + 1)
  let inspect = await docker
    .getImage(ref)
    .inspect()
    .catch(() => undefined)
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
  return { ref, id: inspect.Id, baseDigests: [digest], cached: true, warnings: [] }
}

interface ContextEntry {
  rel: string
  abs: string
  stat: fs.Stats
}

async function buildImage(
  docker: Docker,
  plan: Extract<ImagePlan, { kind: 'build' }>,
  log: ImageLog
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
  // Resolve what each base really is locally, so a retagged base changes the cache key.
  const baseIds: string[] = []
  for (const b of bases) {
    if (b.pin === 'stage' || b.pin === 'scratch') continue
    const found = await docker
      .getImage(b.ref)
      .inspect()
      .catch(() => undefined)
    baseIds.push(`${b.ref}=${found?.Id ?? 'absent'}`)
  }
  const entries = await contextEntries(plan.context)
  const inContext = isInside(plan.context, plan.dockerfile)
  const key = await buildKey(dockerfileText, plan.buildArgs, baseIds, entries)
  const baseDigests = bases.flatMap((b) =>
    b.digest ? [b.digest] : b.pin === 'unpinned' ? [b.ref] : []
  )

  const existing = await docker.listImages({
    filters: JSON.stringify({ label: [`${BUILD_KEY_LABEL}=${key}`] })
  })
  if (existing.length > 0) {
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

  log.info(`building the agent image from ${plan.dockerfile}`)
  const context = packContext(entries, inContext ? undefined : dockerfileText)
  const dockerfileName = inContext
    ? toPosix(path.relative(plan.context, plan.dockerfile))
    : DOCKERFILE_IN_CONTEXT
  let id: string | undefined
  try {
    const stream = await docker.buildImage(
      context as unknown as NodeJS.ReadableStream,
      {
        dockerfile: dockerfileName,
        buildargs: plan.buildArgs,
        labels: { [BUILD_KEY_LABEL]: key },
        t: `airlock/agent:${key.slice(0, 16)}`,
        rm: true,
        forcerm: true,
        pull: false
      } as Docker.ImageBuildOptions
    )
    id = await followProgress(docker, stream, log)
  } catch (error) {
    if (error instanceof ConfigurationError) throw error
    throw new InfrastructureError(`the image build failed: ${errorMessage(error)}`, {
      cause: error
    })
  }
  if (id === undefined) {
    const inspect = await docker.getImage(`airlock/agent:${key.slice(0, 16)}`).inspect()
    id = inspect.Id
  }
  return { ref: plan.dockerfile, id, baseDigests, dockerfileSha256, cached: false, warnings }
}

function isInside(dir: string, file: string): boolean {
  const rel = path.relative(dir, file)
  return !rel.startsWith('..') && !path.isAbsolute(rel)
}

function toPosix(p: string): string {
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

async function buildKey(
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

function packContext(entries: ContextEntry[], externalDockerfile: Buffer | undefined): tar.Pack {
  const pack = tar.pack()
  void (async () => {
    try {
      for (const e of entries) {
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
      pack.destroy(error as Error)
    }
  })()
  return pack
}

/** Follows a build/pull progress stream, logging it; returns the built image ID if announced. */
function followProgress(
  docker: Docker,
  stream: NodeJS.ReadableStream,
  log: ImageLog
): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    let id: string | undefined
    let failure: string | undefined
    docker.modem.followProgress(
      stream,
      (err: Error | null) => {
        if (err) reject(err)
        else if (failure !== undefined) reject(new Error(failure))
        else resolve(id)
      },
      (event: {
        stream?: string
        status?: string
        error?: string
        errorDetail?: { message?: string }
        aux?: { ID?: string }
      }) => {
        if (event.error) failure = event.errorDetail?.message ?? event.error
        if (event.aux?.ID) id = event.aux.ID
        const text = (event.stream ?? event.status ?? '').replace(/\s+$/, '')
        if (text !== '') log.info(text)
      }
    )
  })
}
