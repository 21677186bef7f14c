import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { BUILD_KEY_LABEL, resolveImage } from '../../src/sandbox/docker/image.js'
import { BUSYBOX, docker, imageId } from '../support/run.js'
import { testHost } from '../support/host.js'

describe('concurrent runs of one uncached Dockerfile', () => {
  let ctx: string
  let lockDir: string
  const built = new Set<string>()
  afterAll(async () => {
    // Only the images this test built.
    for (const id of built)
      await docker
        .getImage(id)
        .remove({ force: true })
        .catch(() => undefined)
    fs.rmSync(ctx, { recursive: true, force: true })
    fs.rmSync(lockDir, { recursive: true, force: true })
  })

  it('build it once: one image ID, no orphan image', async () => {
    ctx = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-lockbuild-'))
    lockDir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-lockdir-'))
    const unique = `${process.pid}-${Date.now()}-${Math.random()}`
    fs.writeFileSync(
      path.join(ctx, 'Dockerfile'),
      `FROM ${imageId(BUSYBOX)}\nLABEL dev.airlock.test=build-lock\nCOPY stamp /stamp\n`
    )
    fs.writeFileSync(path.join(ctx, 'stamp'), unique)
    const plan = {
      kind: 'build' as const,
      dockerfile: path.join(ctx, 'Dockerfile'),
      context: ctx,
      buildArgs: {},
      allowUnpinnedBase: false
    }
    const logs: string[][] = []
    const N = 4
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) => {
        const lines: string[] = []
        logs.push(lines)
        return resolveImage(
          docker,
          plan,
          { info: (l) => lines.push(l) },
          {
            holder: `run-${i}`,
            lockDir,
            timeoutMs: testHost.engineTimeoutMs
          }
        )
      })
    )
    for (const r of results) built.add(r.id)
    expect(new Set(results.map((r) => r.id)).size).toBe(1)
    expect(results.filter((r) => !r.cached)).toHaveLength(1)
    expect(
      logs.filter((l) => l.some((x) => x.startsWith('building the agent image')))
    ).toHaveLength(1)
    expect(logs.flat().some((l) => /waiting: this image is being built by run-\d/.test(l))).toBe(
      true
    )
    // Every image carrying this build key: exactly the one built (no orphan from a second build).
    const key = (await docker.getImage(results[0].id).inspect()).Config.Labels?.[BUILD_KEY_LABEL]
    const withKey = await docker.listImages({
      all: true,
      filters: JSON.stringify({ label: [`${BUILD_KEY_LABEL}=${key}`] })
    })
    for (const i of withKey) built.add(i.Id)
    expect(withKey.map((i) => i.Id)).toEqual([results[0].id])
    expect(fs.readdirSync(lockDir)).toEqual([])
  })
})
