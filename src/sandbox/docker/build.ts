// Building the agent image: BuildKit where the engine has it, the classic builder otherwise.
//
// BuildKit is asked for through the engine's own API (`POST /build?version=2`) with the context
// sent as the request body, as the classic builder gets it: the engine serves it to BuildKit
// itself, so no client session (`/session`, gRPC file sync) and no buildx are needed.
import * as path from 'node:path'
import type Docker from 'dockerode'
import { ConfigurationError, InfrastructureError, errorMessage } from '../../errors.js'
import type { ImagePlan } from '../../plan.js'
import type { BaseImage } from '../dockerfile.js'
import type { ImageLog } from '../types.js'
import { DOCKERFILE_IN_CONTEXT, packContext, toPosix } from './build-context.js'
import type { ContextEntry } from './build-context.js'
import { buildkitTrace } from './buildkit-trace.js'

type Pack = ReturnType<typeof packContext>

export const BUILD_KEY_LABEL = 'dev.airlock.build-key'

export type Builder = 'buildkit' | 'classic'

/** The engine facts the choice depends on (`GET /version`). */
export interface BuilderEngine {
  os: string | null
  apiVersion: string | null
}

/**
 * Pure: which builder builds this Dockerfile on this engine, and why. BuildKit needs a Linux
 * engine with API 1.39 or later (Docker 18.09); it cannot name a base image by its local image ID
 * (`FROM sha256:…` is read as a registry name), so such a Dockerfile keeps the classic builder.
 * `DOCKER_BUILDKIT=0` asks for the classic builder, as it does for the docker CLI.
 */
export function pickBuilder(
  engine: BuilderEngine,
  bases: BaseImage[],
  env: NodeJS.ProcessEnv
): { builder: Builder; reason: string } {
  if (env.DOCKER_BUILDKIT === '0') return { builder: 'classic', reason: 'DOCKER_BUILDKIT=0' }
  if (engine.os !== 'linux')
    return { builder: 'classic', reason: `the engine runs on ${engine.os ?? 'an unknown OS'}` }
  const [major, minor] = (engine.apiVersion ?? '0.0').split('.').map((n) => Number(n))
  if (!(major > 1 || (major === 1 && minor >= 39)))
    return {
      builder: 'classic',
      reason: `engine API ${engine.apiVersion ?? 'unknown'} has no BuildKit (needs 1.39)`
    }
  const byId = bases.filter((b) => b.pin === 'image-id')
  if (byId.length > 0)
    return {
      builder: 'classic',
      reason: `a base is named by its local image ID (${byId[0].ref.slice(0, 19)}…), which BuildKit cannot resolve`
    }
  return { builder: 'buildkit', reason: 'the engine has BuildKit' }
}

/** Builds the image; returns its ID and the builder that made it. */
export async function build(
  docker: Docker,
  plan: Extract<ImagePlan, { kind: 'build' }>,
  log: ImageLog,
  source: { dockerfileText: Buffer; entries: ContextEntry[]; inContext: boolean; key: string },
  choice: { builder: Builder; reason: string }
): Promise<{ id: string; builder: Builder }> {
  const tag = `airlock/agent:${source.key.slice(0, 16)}`
  const options = {
    dockerfile: source.inContext
      ? toPosix(path.relative(plan.context, plan.dockerfile))
      : DOCKERFILE_IN_CONTEXT,
    buildargs: plan.buildArgs,
    labels: { [BUILD_KEY_LABEL]: source.key },
    t: tag,
    rm: true,
    forcerm: true,
    pull: false
  }
  const bodies: Pack[] = []
  const context = (): Pack => {
    const body = packContext(source.entries, source.inContext ? undefined : source.dockerfileText)
    bodies.push(body)
    return body
  }
  let builder = choice.builder
  log.info(`building the agent image from ${plan.dockerfile} (${builder}: ${choice.reason})`)
  let id: string | undefined
  try {
    let stream: NodeJS.ReadableStream | undefined
    if (builder === 'buildkit') {
      const body = context()
      try {
        stream = await dial(docker, { ...options, version: '2' }, body)
      } catch (error) {
        // The engine refused the BuildKit request itself (no build ran): the classic builder.
        log.info(`BuildKit refused the build (${errorMessage(error)}); using the classic builder`)
        builder = 'classic'
      }
    }
    stream ??= await dial(docker, options, context())
    id = await followProgress(docker, stream, log)
  } catch (error) {
    if (error instanceof ConfigurationError) throw error
    throw new InfrastructureError(`the image build failed: ${errorMessage(error)}`, {
      cause: error
    })
  } finally {
    // Every context stream made for this build stops reading files once the build is decided
    // (a refused BuildKit request, a finished or failed build), and its end is no unhandled error.
    for (const body of bodies) {
      body.on('error', () => undefined)
      body.destroy()
    }
  }
  id ??= (await docker.getImage(tag).inspect()).Id
  return { id, builder }
}

/** `POST /build` with the context as the body (dockerode's buildImage would open a session for version 2). */
function dial(
  docker: Docker,
  options: Record<string, unknown>,
  body: Pack
): Promise<NodeJS.ReadableStream> {
  return new Promise((resolve, reject) => {
    docker.modem.dial(
      {
        path: '/build?',
        method: 'POST',
        file: body as unknown as NodeJS.ReadableStream,
        options,
        isStream: true,
        statusCodes: { 200: true, 400: 'bad parameter', 500: 'server error' }
      },
      (err: unknown, stream: unknown) => {
        if (err) reject(err instanceof Error ? err : new Error(String(err)))
        else resolve(stream as NodeJS.ReadableStream)
      }
    )
  })
}

/** Follows a build/pull progress stream, logging it; returns the built image ID if announced. */
export function followProgress(
  docker: Docker,
  stream: NodeJS.ReadableStream,
  log: ImageLog
): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    let id: string | undefined
    let failure: string | undefined
    const trace = buildkitTrace()
    docker.modem.followProgress(
      stream,
      (err: Error | null) => {
        if (err) reject(err)
        else if (failure !== undefined) reject(new Error(failure))
        else resolve(id)
      },
      (event: {
        id?: string
        stream?: string
        status?: string
        error?: string
        errorDetail?: { message?: string }
        aux?: { ID?: string } | string
        progressDetail?: { current?: number; total?: number }
      }) => {
        if (event.error) failure = event.errorDetail?.message ?? event.error
        if (event.id === 'moby.buildkit.trace' && typeof event.aux === 'string') {
          for (const line of trace(event.aux)) log.info(line)
          return
        }
        if (typeof event.aux === 'object' && event.aux.ID) id = event.aux.ID
        // A pull's byte counters ("Downloading", "Extracting" with a progress bar) come many
        // times a second: the log keeps each layer's milestones, not its progress.
        if (event.progressDetail?.current !== undefined) return
        const text = (event.stream ?? event.status ?? '').replace(/\s+$/, '')
        if (text !== '') log.info(text)
      }
    )
  })
}
