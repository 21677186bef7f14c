// A preset image its release published (images/published.json), against a real registry on
// loopback: pulled by digest and recorded as pulled, then found on the engine; built here when the
// checkout's preset folder is not the one the release built from, or when the registry cannot be
// reached; and refused, never built around, when the registry serves bytes that do not match.
import { execFileSync } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as http from 'node:http'
import type { AddressInfo } from 'node:net'
import * as os from 'node:os'
import * as path from 'node:path'
import {
  freePort,
  startDockerRegistry,
  stopDockerRegistry
} from '../../scripts/docker-registry.mjs'
import type { ImagePlan } from '../../src/plan.js'
import { imageInputsKey } from '../../src/sandbox/docker/image-cache.js'
import { resolveImage } from '../../src/sandbox/docker/image.js'
import { PublishedImageMismatch } from '../../src/sandbox/docker/published.js'
import { BUSYBOX, docker, imageId } from '../support/run.js'
import { testHost } from '../support/host.js'

type BuildPlan = Extract<ImagePlan, { kind: 'build' }>

const sh = (args: string[], input?: string): string =>
  execFileSync('docker', args, {
    stdio: ['pipe', 'pipe', 'ignore'],
    ...(input !== undefined ? { input } : {})
  })
    .toString()
    .trim()
const gone = (ref: string): void => {
  try {
    execFileSync('docker', ['rmi', '-f', ref], { stdio: 'ignore' })
  } catch {
    // not there
  }
}

let registry: ChildProcess
let dir: string
let port: number
let image: string
let digest: string
let publishedId: string
const made = new Set<string>()

/** An image of its own (a unique file), pushed to the registry and then removed locally. */
function publish(name: string): { image: string; digest: string; id: string } {
  const ctx = fs.mkdtempSync(path.join(dir, 'img-'))
  fs.writeFileSync(path.join(ctx, 'Dockerfile'), `FROM ${BUSYBOX}\nCOPY stamp /stamp\n`)
  fs.writeFileSync(path.join(ctx, 'stamp'), randomBytes(8).toString('hex'))
  const repo = `127.0.0.1:${port}/airlock-it/${name}`
  sh(['build', '-q', '-t', `${repo}:1`, ctx])
  const id = sh(['image', 'inspect', '-f', '{{.Id}}', `${repo}:1`])
  sh(['push', '-q', `${repo}:1`])
  const repoDigest = sh([
    'image',
    'inspect',
    '-f',
    '{{range .RepoDigests}}{{println .}}{{end}}',
    `${repo}:1`
  ])
    .split('\n')
    .find((d) => d.startsWith(`${repo}@`)) as string
  gone(`${repo}:1`)
  gone(repoDigest)
  made.add(id)
  return { image: repo, digest: repoDigest.slice(repoDigest.indexOf('@') + 1), id }
}

/** The preset's folder of a checkout: a Dockerfile on a base pinned by image ID, and a stamp. */
function presetFolder(): string {
  const ctx = fs.mkdtempSync(path.join(dir, 'preset-'))
  fs.writeFileSync(path.join(ctx, 'Dockerfile'), `FROM ${imageId(BUSYBOX)}\nCOPY stamp /stamp\n`)
  fs.writeFileSync(path.join(ctx, 'stamp'), randomBytes(8).toString('hex'))
  return ctx
}

async function planFor(
  ctx: string,
  over: Partial<NonNullable<BuildPlan['published']>> = {}
): Promise<BuildPlan> {
  const plan: BuildPlan = {
    kind: 'build',
    dockerfile: path.join(ctx, 'Dockerfile'),
    context: ctx,
    buildArgs: {},
    allowUnpinnedBase: false
  }
  return {
    ...plan,
    published: {
      image,
      digest,
      platforms: { 'linux/amd64': digest },
      inputsKey: (await imageInputsKey(plan)) as string,
      version: '1.2.3',
      repository: 'owner/agent-airlock',
      ...over
    }
  }
}

async function resolve(plan: BuildPlan, lines: string[]) {
  const info = await resolveImage(
    docker,
    plan,
    { info: (l) => lines.push(l) },
    { lockDir: dir, timeoutMs: testHost.engineTimeoutMs }
  )
  made.add(info.id)
  return info
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-published-'))
  port = await freePort()
  registry = await startDockerRegistry(path.join(dir, 'registry'), port)
  ;({ image, digest, id: publishedId } = publish('preset'))
})

afterAll(async () => {
  if (registry) await stopDockerRegistry(registry)
  for (const id of made) gone(id)
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('a published preset image', () => {
  it('is pulled by its digest and recorded as pulled; the next run finds it on the engine', async () => {
    const plan = await planFor(presetFolder())
    const lines: string[] = []
    const first = await resolve(plan, lines)
    expect(first).toMatchObject({
      ref: `${image}@${digest}`,
      id: publishedId,
      source: 'pulled',
      cached: false,
      published: { image, digest, version: '1.2.3', used: true }
    })
    expect(lines.join('\n')).toContain(`pulling ${image}@${digest} (published by release 1.2.3)`)
    expect(lines.join('\n')).not.toMatch(/building/)
    const again = await resolve(plan, [])
    expect(again).toMatchObject({ id: publishedId, source: 'cache', cached: true })
    gone(`${image}@${digest}`)
  })

  it('is built here, and says why, when the checkout is not what the release built from', async () => {
    const ctx = presetFolder()
    const plan = await planFor(ctx, { inputsKey: 'f'.repeat(64) })
    const lines: string[] = []
    const info = await resolve(plan, lines)
    expect(info.source).toBe('built')
    expect(info.id).not.toBe(publishedId)
    expect(info.published).toMatchObject({ used: false })
    expect(info.published?.reason).toMatch(/not what it was built from/)
    expect(lines.join('\n')).not.toContain('pulling')
    // Nothing was pulled: the published image is not on the engine.
    expect(() => sh(['image', 'inspect', `${image}@${digest}`])).toThrow()
  })

  it('is built here, with a warning, when the registry cannot be reached', async () => {
    const closed = await freePort()
    const plan = await planFor(presetFolder(), { image: `127.0.0.1:${closed}/airlock-it/preset` })
    const lines: string[] = []
    const info = await resolve(plan, lines)
    expect(info.source).toBe('built')
    expect(info.published?.used).toBe(false)
    expect(info.published?.reason).toMatch(/the registry did not give/)
    expect(info.warnings.join('\n')).toMatch(/published image not used/)
    expect(lines.join('\n')).toMatch(/building the preset's image here/)
  })

  it('is refused, and nothing built, when the registry serves other bytes for the digest', async () => {
    // A hostile registry: a loopback proxy in front of the real one that answers the published
    // digest with another image's manifest (and claims the digest asked for).
    const other = publish('other')
    const otherManifest = await fetch(
      `http://127.0.0.1:${port}/v2/airlock-it/other/manifests/${other.digest}`,
      { headers: { accept: 'application/vnd.docker.distribution.manifest.v2+json' } }
    )
    const body = Buffer.from(await otherManifest.arrayBuffer())
    const type = otherManifest.headers.get('content-type') as string
    const proxy = http.createServer((req, res) => {
      const url = req.url ?? '/'
      if (url.includes('/manifests/')) {
        res.writeHead(200, {
          'content-type': type,
          'docker-content-digest': digest,
          'content-length': String(body.length)
        })
        res.end(req.method === 'HEAD' ? undefined : body)
        return
      }
      const upstream = http.request(
        {
          host: '127.0.0.1',
          port,
          path: url.replace('/airlock-it/tampered/', '/airlock-it/other/'),
          method: req.method,
          headers: req.headers
        },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers)
          r.pipe(res)
        }
      )
      req.pipe(upstream)
    })
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r))
    const hostile = (proxy.address() as AddressInfo).port
    try {
      const plan = await planFor(presetFolder(), {
        image: `127.0.0.1:${hostile}/airlock-it/tampered`
      })
      const lines: string[] = []
      const error = await resolve(plan, lines).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(PublishedImageMismatch)
      // The engine's own check of the digest caught it, and the message says what to do.
      expect((error as Error).message).toMatch(
        /does not match its digest \(.*digest.*\); the image is refused/
      )
      expect(lines.join('\n')).not.toMatch(/building/)
      expect(() =>
        sh(['image', 'inspect', `127.0.0.1:${hostile}/airlock-it/tampered@${digest}`])
      ).toThrow()
    } finally {
      proxy.close()
      proxy.closeAllConnections()
    }
  })
})
