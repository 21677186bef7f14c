// The agent image built by BuildKit where the engine has it, and by the classic builder where a
// base is named by its local image ID or DOCKER_BUILDKIT=0 asks for it; both leave the same kind of
// image (build-key label, the context's files) and a second resolve is a cache hit.
import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { InfrastructureError } from '../../src/errors.js'
import { BUILD_KEY_LABEL, resolveImage } from '../../src/sandbox/docker/image.js'
import { BUSYBOX, docker, imageId } from '../support/run.js'
import { testHost } from '../support/host.js'
import { readHost } from '../../src/host.js'

const built = new Set<string>()
let root: string
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-builder-int-'))
})
afterAll(async () => {
  // Only the images this test built.
  for (const id of built)
    await docker
      .getImage(id)
      .remove({ force: true })
      .catch(() => undefined)
  fs.rmSync(root, { recursive: true, force: true })
})

/** A context of its own (a unique stamp, so no other run's image is a cache hit). */
function context(from: string, extra = ''): { dir: string; stamp: string } {
  const dir = fs.mkdtempSync(path.join(root, 'ctx-'))
  const stamp = randomBytes(8).toString('hex')
  fs.writeFileSync(path.join(dir, 'stamp'), stamp)
  fs.writeFileSync(path.join(dir, 'secret.env'), 'not for the image')
  fs.writeFileSync(path.join(dir, '.dockerignore'), 'secret.env\n')
  fs.writeFileSync(
    path.join(dir, 'Dockerfile'),
    `FROM ${from}\nCOPY . /ctx/\nRUN cat /ctx/stamp && test ! -e /ctx/secret.env\n${extra}`
  )
  return { dir, stamp }
}

async function resolve(dir: string, lines: string[], buildkit = testHost.buildkit) {
  const info = await resolveImage(
    docker,
    {
      kind: 'build',
      dockerfile: path.join(dir, 'Dockerfile'),
      context: dir,
      buildArgs: {},
      allowUnpinnedBase: true
    },
    { info: (l) => lines.push(l) },
    { lockDir: root, timeoutMs: testHost.engineTimeoutMs, buildkit }
  )
  built.add(info.id)
  return info
}

describe('the image builder', () => {
  test('BuildKit (the base by name, present locally): the image, its label, its progress; then a cache hit', async () => {
    const { dir, stamp } = context(BUSYBOX)
    const lines: string[] = []
    const info = await resolve(dir, lines)
    expect(info).toMatchObject({ cached: false, builder: 'buildkit' })
    const log = lines.join('\n')
    expect(log).toMatch(/\(buildkit: the engine has BuildKit\)/)
    // BuildKit's progress, decoded: the step names and the RUN step's output.
    expect(log).toMatch(/RUN cat \/ctx\/stamp/)
    expect(log).toContain(stamp)
    const inspect = await docker.getImage(info.id).inspect()
    expect(inspect.Config.Labels?.[BUILD_KEY_LABEL]).toMatch(/^[0-9a-f]{64}$/)
    const again = await resolve(dir, [])
    expect(again).toMatchObject({ cached: true, id: info.id })
    expect(again.builder).toBeUndefined()
  }, 120_000)

  test('a base named by its local image ID: the classic builder', async () => {
    const { dir, stamp } = context(imageId(BUSYBOX))
    const lines: string[] = []
    const info = await resolve(dir, lines)
    expect(info).toMatchObject({ cached: false, builder: 'classic' })
    expect(lines.join('\n')).toMatch(/\(classic: a base is named by its local image ID/)
    expect(lines.join('\n')).toContain(stamp)
  }, 120_000)

  test('DOCKER_BUILDKIT=0: the classic builder for a Dockerfile BuildKit could build', async () => {
    const { dir } = context(BUSYBOX)
    // The host's DOCKER_BUILDKIT, as the entry reads it once (src/host.ts) and hands it down.
    const info = await resolve(dir, [], readHost({ ...process.env, DOCKER_BUILDKIT: '0' }).buildkit)
    expect(info).toMatchObject({ cached: false, builder: 'classic' })
  }, 120_000)

  test('a failing step under BuildKit is an infrastructure error naming it', async () => {
    const { dir } = context(BUSYBOX, 'RUN echo airlock-step-fails && false\n')
    const lines: string[] = []
    const error = await resolve(dir, lines).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InfrastructureError)
    expect((error as Error).message).toMatch(/the image build failed: .*airlock-step-fails/)
    expect(lines.join('\n')).toMatch(/ERROR .*RUN echo airlock-step-fails/)
  }, 120_000)
})
