// The caches against real backends: the agent image saved and loaded through a real engine (a
// fresh machine simulated by removing the built image), a tampered entry refused; and GitHub's own
// `@actions/cache` client against a local stand-in of the cache service, where the action's keys
// keep a pull request's entry away from the default branch even though the stand-in does not.
import { execFileSync } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import Docker from 'dockerode'
import * as tar from 'tar-stream'
import { dependencyCacheKeys } from '../../src/cache/keys.js'
import { restoreImage, saveImage } from '../../src/cache/caches.js'
import { ActionsStore } from '../../src/cache/actions-store.js'
import { FolderStore } from '../../src/cache/store.js'
import type { ImagePlan } from '../../src/plan.js'
import { DockerRuntime } from '../../src/sandbox/docker/index.js'
import {
  freePort,
  startDockerRegistry,
  stopDockerRegistry
} from '../../scripts/docker-registry.mjs'
import { startCacheService } from '../support/cache-service.js'
import { pushForDigest } from '../support/registry.js'
import type { CacheService } from '../support/cache-service.js'
import { testHost } from '../support/host.js'

const docker = new Docker()
const runtime = new DockerRuntime(testHost, docker)
const quiet = { info: (): void => undefined, warn: (): void => undefined }
let tmp: string

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-caches-'))
})
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

function removeImage(id: string): void {
  execFileSync('docker', ['rmi', '-f', id], { stdio: 'pipe' })
}

describe('the agent image across machines', () => {
  test('a fresh engine loads the saved image instead of building; a tampered entry is refused and the image built', async () => {
    const base = execFileSync('docker', [
      'image',
      'inspect',
      '-f',
      '{{.Id}}',
      'airlock-local/busybox:1'
    ])
      .toString()
      .trim()
    const ctx = fs.mkdtempSync(path.join(tmp, 'ctx-'))
    // Unique per test run: no other run on this engine builds the same image.
    fs.writeFileSync(
      path.join(ctx, 'Dockerfile'),
      `FROM ${base}\nRUN echo ${path.basename(ctx)} > /built\n`
    )
    const plan: ImagePlan = {
      kind: 'build',
      dockerfile: path.join(ctx, 'Dockerfile'),
      context: ctx,
      buildArgs: {},
      allowUnpinnedBase: false
    }
    const store = new FolderStore(path.join(tmp, 'store'))
    const work = path.join(tmp, 'work')
    const built: string[] = []
    try {
      // A trusted run builds and saves.
      const r1 = await restoreImage(runtime, store, 'local', plan, work, quiet)
      expect(r1?.meta).toBeUndefined()
      const first = await runtime.resolveImage(plan, quiet)
      built.push(first.id)
      expect(first.cached).toBe(false)
      const saved = await saveImage(runtime, store, 'local', plan, first, r1!, work, quiet)
      expect(saved.saved).toBe('saved')

      // A fresh machine: the image is gone; it is loaded, checked, and the build finds it.
      removeImage(first.id)
      const r2 = await restoreImage(runtime, store, 'local', plan, work, quiet)
      expect(r2?.use.restored).toBe(saved.key)
      const second = await runtime.resolveImage(plan, quiet)
      expect({ id: second.id, cached: second.cached }).toEqual({ id: first.id, cached: true })
      // A pull request's run does not write the image entry.
      expect((await saveImage(runtime, store, 'pr-7', plan, second, r2!, work, quiet)).saved).toBe(
        'skipped'
      )

      // Tampered: the record names another build key. The loaded image is removed, not used.
      removeImage(first.id)
      const metaFile = path.join(tmp, 'store', `${saved.key}-meta`, 'image.json')
      const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8')) as { buildKey: string }
      fs.writeFileSync(metaFile, JSON.stringify({ ...meta, buildKey: 'f'.repeat(64) }))
      const r3 = await restoreImage(runtime, store, 'local', plan, work, quiet)
      expect(r3?.use.detail).toMatch(/^refused: image .* carries build key/)
      await expect(docker.getImage(first.id).inspect()).rejects.toThrow()
      const third = await runtime.resolveImage(plan, quiet)
      built.push(third.id)
      expect(third.cached).toBe(false)
    } finally {
      for (const id of built) {
        try {
          removeImage(id)
        } catch {
          // already gone
        }
      }
    }
  }, 180_000)
})

/** The sha256 of every layer file a save file holds, and its manifest's layer count. */
async function layersOf(file: string): Promise<{ digests: Set<string>; declared: number }> {
  const digests = new Set<string>()
  let manifest = ''
  const extract = tar.extract()
  const done = (async () => {
    for await (const entry of extract) {
      const h = createHash('sha256')
      const chunks: Buffer[] = []
      for await (const c of entry) {
        h.update(c as Buffer)
        if (entry.header.name === 'manifest.json') chunks.push(c as Buffer)
      }
      if (entry.header.type === 'file' && entry.header.name.endsWith('/layer.tar'))
        digests.add(`sha256:${h.digest('hex')}`)
      if (entry.header.name === 'manifest.json') manifest = Buffer.concat(chunks).toString('utf8')
    }
  })()
  fs.createReadStream(file).pipe(extract)
  await done
  const items = JSON.parse(manifest) as { Layers: string[] }[]
  return { digests, declared: items[0].Layers.length }
}

function inspectId(ref: string): string | undefined {
  try {
    return execFileSync('docker', ['image', 'inspect', '-f', '{{.Id}}', ref], { stdio: 'pipe' })
      .toString()
      .trim()
  } catch {
    return undefined
  }
}

describe('the agent image on a base pinned by digest', () => {
  let dir: string
  let port: number
  let registry: ChildProcess | undefined
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(tmp, 'registry-'))
    port = await freePort()
    registry = await startDockerRegistry(dir, port)
  })
  afterAll(async () => {
    if (registry) await stopDockerRegistry(registry)
  })

  test("the saved file holds only the image's own layers; a fresh runner pulls the base by digest and loads the image; a base it cannot pull means a build", async () => {
    const unique = path.basename(dir)
    const repo = `127.0.0.1:${port}/airlock-imgcache/base`
    const ctx = fs.mkdtempSync(path.join(tmp, 'ctx-'))
    // A base of this test's own (busybox plus a layer of its own), pushed to the loopback registry.
    fs.writeFileSync(
      path.join(ctx, 'Dockerfile'),
      `FROM airlock-local/busybox:1\nRUN echo ${unique} > /base\n`
    )
    execFileSync('docker', ['build', '-q', '-t', `${repo}:1`, ctx], { stdio: 'pipe' })
    const baseId = inspectId(`${repo}:1`) as string
    const created: string[] = []
    try {
      const pinned = pushForDigest(repo)
      const baseLayers = (await docker.getImage(baseId).inspect()).RootFS.Layers ?? []
      expect(baseLayers.length).toBeGreaterThan(1)
      // The runner that builds is fresh too: the build pulls the base.
      removeImage(baseId)
      expect(inspectId(pinned)).toBeUndefined()

      fs.writeFileSync(
        path.join(ctx, 'Dockerfile'),
        `FROM ${pinned}\nRUN echo ${unique} > /built\n`
      )
      const plan: ImagePlan = {
        kind: 'build',
        dockerfile: path.join(ctx, 'Dockerfile'),
        context: ctx,
        buildArgs: {},
        allowUnpinnedBase: false
      }
      const storeDir = path.join(tmp, 'store-digest')
      const store = new FolderStore(storeDir)
      const work = path.join(tmp, 'work-digest')
      const r1 = await restoreImage(runtime, store, 'local', plan, work, quiet)
      const first = await runtime.resolveImage(plan, quiet)
      created.push(first.id)
      expect(first.cached).toBe(false)
      const saved = await saveImage(runtime, store, 'local', plan, first, r1!, work, quiet)
      expect(saved.saved).toBe('saved')

      // Thin: every layer of the image is declared, none of the base's is in the file.
      const file = await layersOf(path.join(storeDir, saved.key, 'image.tar'))
      const own = (await docker.getImage(first.id).inspect()).RootFS.Layers ?? []
      expect(file.declared).toBe(own.length)
      expect(baseLayers.filter((l) => file.digests.has(l))).toEqual([])
      expect(file.digests.size).toBeGreaterThan(0)

      // A fresh runner: neither the image nor the base (by any name) is on the engine.
      const fresh = (): void => {
        for (const id of [first.id, baseId]) if (inspectId(id)) removeImage(id)
        expect(inspectId(pinned)).toBeUndefined()
      }
      fresh()
      const r2 = await restoreImage(runtime, store, 'local', plan, work, quiet)
      expect(r2?.use.restored).toBe(saved.key)
      expect(inspectId(pinned)).toBe(baseId)
      const second = await runtime.resolveImage(plan, quiet)
      expect({ id: second.id, cached: second.cached }).toEqual({ id: first.id, cached: true })

      // A record that names another base than the Dockerfile's is not used (nothing is pulled).
      const metaFile = path.join(storeDir, `${saved.key}-meta`, 'image.json')
      const meta = fs.readFileSync(metaFile, 'utf8')
      const other = `${repo}@sha256:${'0'.repeat(64)}`
      fs.writeFileSync(metaFile, meta.replace(pinned, other))
      const tampered = await restoreImage(runtime, store, 'local', plan, work, quiet)
      expect(tampered?.use.detail).toBe('unreadable entry')
      fs.writeFileSync(metaFile, meta)

      // The base cannot be pulled (its registry is down): nothing is loaded, the entry is not used.
      fresh()
      await stopDockerRegistry(registry!)
      registry = undefined
      const r3 = await restoreImage(runtime, store, 'local', plan, work, quiet)
      expect(r3?.use).toMatchObject({ restored: null })
      expect(r3?.use.detail).toMatch(/^base .*airlock-imgcache\/base@sha256:.* could not be pulled/)
      expect(r3?.meta).toBeUndefined()
      expect(inspectId(first.id)).toBeUndefined()
      // With its registry back, the build does its usual thing.
      registry = await startDockerRegistry(dir, port)
      const third = await runtime.resolveImage(plan, quiet)
      created.push(third.id)
      expect(third.cached).toBe(false)
    } finally {
      for (const id of [...created, baseId]) {
        try {
          removeImage(id)
        } catch {
          // already gone
        }
      }
    }
  }, 120_000)
})

describe('the Actions cache through @actions/cache', () => {
  let svc: CacheService
  const saved: Record<string, string | undefined> = {}
  beforeAll(async () => {
    svc = await startCacheService()
    for (const [k, v] of Object.entries({ ...svc.env, GITHUB_SERVER_URL: 'https://github.com' })) {
      saved[k] = process.env[k]
      process.env[k] = v
    }
  }, 60_000)
  afterAll(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
    await svc?.close()
  })

  test('a pull request saves in its scope; the default branch never restores it; the pull request reads the base entry', async () => {
    expect(ActionsStore.available()).toBe(true)
    const store = new ActionsStore(quiet)
    const dir = path.join(tmp, 'actions-cache', 'deps')
    const facts = {
      lockfiles: [{ path: 'package-lock.json', sha256: 'a'.repeat(64) }],
      command: 'npm ci',
      image: 'k',
      network: [] as string[]
    }
    const pr = dependencyCacheKeys('pr-7', facts)
    fs.mkdirSync(path.join(dir, 'npm'), { recursive: true })
    fs.writeFileSync(path.join(dir, 'npm', 'from-pr'), 'written by a pull request')
    expect(await store.save(dir, pr.key)).toBe('saved')
    expect(await store.save(dir, pr.key)).toBe('exists')

    // The default branch, same lockfile: the stand-in holds the entry, the keys never ask for it.
    const base = dependencyCacheKeys('base', facts)
    expect(await store.restore(dir, base.key, base.restoreKeys)).toBeUndefined()
    expect(fs.readdirSync(dir)).toEqual([])
    expect(svc.lookups.at(-1)).toMatchObject({ matched: null })

    // The pull request itself finds its entry again, byte for byte.
    expect(await store.restore(dir, pr.key, pr.restoreKeys)).toBe(pr.key)
    expect(fs.readFileSync(path.join(dir, 'npm', 'from-pr'), 'utf8')).toBe(
      'written by a pull request'
    )

    // The default branch writes; another pull request with a new lockfile starts from it.
    fs.rmSync(path.join(dir, 'npm', 'from-pr'))
    fs.writeFileSync(path.join(dir, 'npm', 'from-base'), 'base')
    expect(await store.save(dir, base.key)).toBe('saved')
    const other = dependencyCacheKeys('pr-8', {
      ...facts,
      lockfiles: [{ path: 'package-lock.json', sha256: 'b'.repeat(64) }]
    })
    expect(await store.restore(dir, other.key, other.restoreKeys)).toBe(base.key)
    expect(fs.readdirSync(path.join(dir, 'npm'))).toEqual(['from-base'])
    expect(svc.violations).toEqual([])
  }, 120_000)
})
