// The caches against real backends: the agent image saved and loaded through a real engine (a
// fresh machine simulated by removing the built image), a tampered entry refused; and GitHub's own
// `@actions/cache` client against a local stand-in of the cache service, where the action's keys
// keep a pull request's entry away from the default branch even though the stand-in does not.
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import Docker from 'dockerode'
import { dependencyCacheKeys } from '../../src/cache/keys.js'
import { restoreImage, saveImage } from '../../src/cache/caches.js'
import { ActionsStore, FolderStore } from '../../src/cache/store.js'
import type { ImagePlan } from '../../src/plan.js'
import { DockerRuntime } from '../../src/sandbox/docker/index.js'
import { startCacheService } from '../support/cache-service.js'
import type { CacheService } from '../support/cache-service.js'

const docker = new Docker()
const runtime = new DockerRuntime(docker)
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
      image: 'k'
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
