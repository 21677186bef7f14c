// The image stage: the agent image resolved (built or found), restored from the image cache
// first where the run has one, saved to it after a build where the run may write it; and what
// the report records about it.
import { restoreImage, saveImage } from '../cache/caches.js'
import type { CacheStore } from '../cache/store.js'
import type { Logger } from '../log.js'
import type { RunPlan } from '../plan.js'
import type { CacheUse } from '../report/report.js'
import type { ImageInfo, Runtime } from '../sandbox/types.js'
import type { AttestationResult, AttestationTarget } from '../presets/attestation.js'
import * as path from 'node:path'

/** The resolved image and, where the run has an image cache, what the cache did. */
export type RunImage = ImageInfo & { cacheUse?: CacheUse; attestation?: AttestationResult }

/** Checks a published image's build provenance (src/presets/attestation.ts); throws to refuse it. */
export type VerifyImage = (target: AttestationTarget) => Promise<AttestationResult>

export async function resolveRunImage(
  plan: RunPlan,
  runtime: Runtime,
  log: Logger,
  cache: { store: CacheStore; dir: string } | undefined,
  signal: AbortSignal | undefined,
  verify?: VerifyImage
): Promise<RunImage> {
  return log.group('image', async () => {
    // A preset image its release published is pulled by digest: the registry is its cache.
    const published = plan.image.kind === 'build' && plan.image.published !== undefined
    const c = cache && plan.cache.image && !published ? cache : undefined
    const cacheLog = { info: (l: string) => log.info(l), warn: (l: string) => log.warn(l) }
    const imageDir = path.join(c?.dir ?? '', 'image-cache')
    const restored = c
      ? await restoreImage(runtime, c.store, plan.cache.scope, plan.image, imageDir, cacheLog)
      : undefined
    const resolved = await runtime.resolveImage(
      plan.image,
      { info: (l) => log.info(l) },
      { holder: plan.runId, ...(signal ? { signal } : {}) }
    )
    const use =
      c && restored
        ? await saveImage(
            runtime,
            c.store,
            plan.cache.scope,
            plan.image,
            resolved,
            restored,
            imageDir,
            cacheLog
          )
        : undefined
    // A published image is used only after its provenance is verified, or the report says why not.
    let attestation: AttestationResult | undefined
    if (resolved.published?.used === true) {
      attestation =
        verify === undefined
          ? { status: 'skipped', detail: 'this entry does not check attestations' }
          : await verify({ ref: resolved.ref, repository: resolved.published.repository })
      log.info(`build provenance of ${resolved.ref}: ${attestation.status} (${attestation.detail})`)
    }
    return {
      ...resolved,
      ...(use ? { cacheUse: use } : {}),
      ...(attestation ? { attestation } : {})
    }
  })
}
