// The caches' benchmark (`npm run bench -- --only caches`): interleaved pairs, medians, ratios.
//
//   C1  warm install: the dependency cache restored (FolderStore) + `npm ci` of the demo project
//       vs  cold `npm ci` with an empty cache, both against a local Verdaccio behind a delaying
//       proxy (bench/delay-proxy.mjs: --latency-ms per request, --mbit shared by all downloads;
//       --latency-ms 0 --mbit 0: no proxy), as a registry across a network behaves
//   C2  the same with a lockfile of ~500 packages (generated here into Verdaccio's storage; each
//       package --package-kb of incompressible data, as real packages weigh)
//   C3  a simulated fresh runner: the agent image (on a base pinned by digest, from a registry on
//       loopback) removed, loaded from the image cache, checked, found by resolveImage  vs  a
//       cold build of the same Dockerfile (the image removed); the base stays on the engine
//   C3b the same with the base removed too: both sides pull it by digest first
//
// The installs run in a container of the Node image with the install phase's cache variables
// (CACHE_ENV), on an internal network whose only other member is the registry.
import { createHash, randomBytes } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { freePort, startDockerRegistry, stopDockerRegistry } from '../scripts/docker-registry.mjs'
import { gzipSync } from 'node:zlib'
import { parseArgs } from 'node:util'
import Docker from 'dockerode'
import * as tar from 'tar-stream'
import { CACHE_ENV, CACHE_MOUNT, restoreImage, saveImage } from '../src/cache/caches.js'
import { FolderStore } from '../src/cache/store.js'
import type { ImagePlan } from '../src/plan.js'
import { DockerRuntime } from '../src/sandbox/docker/index.js'
import type { Comparison } from './stats.js'
import { formatMarkdown, formatTable, interleavedSchedule, summarize } from './stats.js'
import { readHost } from '../src/host.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    packages: { type: 'string', default: '500' },
    markdown: { type: 'boolean', default: false },
    cases: { type: 'string', default: 'C1,C2,C3,C3b' },
    // C3's agent image: the claude-code preset (a global npm install of Claude Code from the npm
    // registry, as a fresh runner would do it), or `jq` (one small Debian package).
    'c3-image': { type: 'string', default: 'claude-code' },
    // The registry's distance: a hosted runner to a registry's CDN (a round trip and the
    // server's answer per request; one link's bandwidth shared by all downloads).
    'latency-ms': { type: 'string', default: '40' },
    mbit: { type: 'string', default: '100' },
    'package-kb': { type: 'string', default: '32' }
  },
  strict: false
})
const rounds = Number(flags.rounds)
const latencyMs = Number(flags['latency-ms'])
const bytesPerSecond = (Number(flags.mbit) * 1e6) / 8
const packageBytes = Math.round(Number(flags['package-kb']) * 1024)
const cases = new Set(String(flags.cases).toUpperCase().split(','))
/** Where the warm side's time goes: each step's times, for the medians printed after the table. */
const parts = new Map<string, number[]>()
function part(name: string, ms: number): void {
  parts.set(name, [...(parts.get(name) ?? []), ms])
}
const docker = new Docker()
const runtime = new DockerRuntime(readHost(process.env), docker)
const NODE = 'airlock-local/node:24-npm'
const LABEL = { 'dev.airlock.bench': 'caches' }
const quiet = { info: (): void => undefined, warn: (): void => undefined }
const sh = (cmd: string, args: string[], opts: { cwd?: string } = {}): string =>
  execFileSync(cmd, args, { stdio: 'pipe', ...opts }).toString()

async function tgz(files: Record<string, string>): Promise<Buffer> {
  const pack = tar.pack()
  for (const [f, text] of Object.entries(files)) pack.entry({ name: `package/${f}` }, text)
  pack.finalize()
  const chunks: Buffer[] = []
  for await (const c of pack) chunks.push(c as Buffer)
  return gzipSync(Buffer.concat(chunks))
}

/** Packages written straight into Verdaccio's storage folder (no publish round trips). */
async function seed(storage: string, names: string[]): Promise<void> {
  for (const name of names) {
    const pkg = { name, version: '1.0.0', main: 'index.js' }
    const data = await tgz({
      'package.json': JSON.stringify(pkg),
      'index.js': `module.exports = ${JSON.stringify(name)}\n// ${'x'.repeat(2000)}\n`,
      // What a package weighs on the wire: data gzip cannot shrink.
      'data.txt': randomBytes(Math.floor(packageBytes * 0.75)).toString('base64')
    })
    const dir = path.join(storage, name)
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, `${name}-1.0.0.tgz`), data)
    const dist = {
      tarball: `http://registry.invalid/${name}/-/${name}-1.0.0.tgz`,
      shasum: createHash('sha1').update(data).digest('hex'),
      integrity: `sha512-${createHash('sha512').update(data).digest('base64')}`
    }
    const now = new Date().toISOString()
    fs.writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({
        name,
        versions: { '1.0.0': { ...pkg, _id: `${name}@1.0.0`, dist } },
        'dist-tags': { latest: '1.0.0' },
        time: { modified: now, created: now, '1.0.0': now },
        _attachments: {},
        _uplinks: {},
        _distfiles: {},
        _rev: '1-0000000000000000'
      })
    )
  }
}

function project(dir: string, names: string[], registry: string): void {
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: 'bench',
      version: '1.0.0',
      private: true,
      dependencies: Object.fromEntries(names.map((n) => [n, '1.0.0']))
    })
  )
  sh('npm', ['install', '--package-lock-only', '--ignore-scripts', '--registry', registry], {
    cwd: dir
  })
}

async function npmCi(net: string, registry: string, proj: string, cache: string): Promise<void> {
  const c = await docker.createContainer({
    Image: NODE,
    User: '1000:1000',
    Cmd: [
      'sh',
      '-c',
      `rm -rf /w/node_modules && cd /w && npm ci --registry ${registry} --no-audit --no-fund --loglevel=error`
    ],
    Env: ['HOME=/tmp', ...CACHE_ENV],
    Labels: LABEL,
    HostConfig: { NetworkMode: net, Binds: [`${proj}:/w`, `${cache}:${CACHE_MOUNT}`] }
  })
  try {
    await c.start()
    const r = (await c.wait()) as { StatusCode: number }
    if (r.StatusCode !== 0) throw new Error(`npm ci exited ${r.StatusCode}`)
  } finally {
    await c.remove({ force: true })
  }
}

/** Waits until `url` answers its ping (the registry, or the proxy in front of it). */
async function ready(url: string, what: string): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}-/ping`)).ok) return
    } catch {
      if (i > 120) throw new Error(`${what} did not start`)
    }
    await new Promise((r) => setTimeout(r, 500))
  }
}

async function time(fn: () => Promise<void>): Promise<number> {
  const t = performance.now()
  await fn()
  return performance.now() - t
}

async function main(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-bench-caches-'))
  fs.chmodSync(tmp, 0o777)
  const net = `airlock-bench-caches-${process.pid}`
  await docker.createNetwork({ Name: net, Internal: true, Labels: LABEL })
  let registry: Docker.Container | undefined
  let delay: Docker.Container | undefined
  const built: string[] = []
  const results: Comparison[] = []
  try {
    const big = Array.from({ length: Number(flags.packages) }, (_, i) => `bench-pkg-${i}`)
    const demo = ['bench-demo-a', 'bench-demo-b']
    const data = path.join(tmp, 'registry')
    fs.mkdirSync(path.join(data, 'storage'), { recursive: true })
    await seed(path.join(data, 'storage'), [...big, ...demo])
    fs.writeFileSync(
      path.join(data, 'config.yaml'),
      "storage: /data/storage\nuplinks: {}\npackages:\n  '**':\n    access: $all\n    publish: $all\nlog: {type: stdout, format: pretty, level: warn}\n"
    )
    sh('chmod', ['-R', 'a+rwX', data])
    registry = await docker.createContainer({
      Image: NODE,
      Cmd: [
        'node',
        '/opt/registry/node_modules/verdaccio/bin/verdaccio',
        '--config',
        '/data/config.yaml',
        '--listen',
        '0.0.0.0:4873'
      ],
      User: '1000:1000',
      Env: ['HOME=/tmp'],
      Labels: LABEL,
      HostConfig: {
        NetworkMode: net,
        Binds: [`${path.join(root, 'test-tools', 'registry')}:/opt/registry:ro`, `${data}:/data`]
      }
    })
    await registry.start()
    const ip = (await registry.inspect()).NetworkSettings.Networks[net].IPAddress
    let url = `http://${ip}:4873/`
    await ready(url, 'Verdaccio')
    if (latencyMs > 0 || bytesPerSecond > 0) {
      // The registry across a network: the installs (and the lockfile) go through the proxy,
      // which forwards only to this registry, on this internal network.
      delay = await docker.createContainer({
        Image: NODE,
        Cmd: [
          'node',
          '/opt/delay-proxy.mjs',
          '4874',
          url,
          String(latencyMs),
          String(bytesPerSecond > 0 ? bytesPerSecond : 1e12)
        ],
        User: '1000:1000',
        Labels: LABEL,
        HostConfig: {
          NetworkMode: net,
          Binds: [`${path.join(root, 'bench', 'delay-proxy.mjs')}:/opt/delay-proxy.mjs:ro`]
        }
      })
      await delay.start()
      const proxyIp = (await delay.inspect()).NetworkSettings.Networks[net].IPAddress
      url = `http://${proxyIp}:4874/`
      await ready(url, 'the delaying proxy')
      process.stderr.write(
        `[caches] registry behind a delaying proxy: ${latencyMs} ms per request, ${flags.mbit} Mbit/s shared; packages of ${flags['package-kb']} KiB\n`
      )
    }

    for (const [id, names, title] of [
      ['C1', demo, 'warm install (cache restored) vs cold, demo project (2 packages)'],
      ['C2', big, `warm install vs cold, ${big.length}-package lockfile`]
    ] as const) {
      if (!cases.has(id)) continue
      const proj = path.join(tmp, `proj-${id}`)
      project(proj, [...names], url)
      sh('chmod', ['-R', 'a+rwX', proj])
      // The warm entry: one install into an empty cache, saved as the install phase saves it.
      const store = new FolderStore(path.join(tmp, `store-${id}`))
      const seedCache = path.join(tmp, `seed-${id}`)
      fs.mkdirSync(seedCache, { mode: 0o777 })
      fs.chmodSync(seedCache, 0o777)
      await npmCi(net, url, proj, seedCache)
      await store.save(seedCache, 'warm')
      const c: Comparison = { id, title, target: 0.3, ours: [], baseline: [] }
      for (const side of interleavedSchedule(rounds + 1).slice(0)) {
        const cache = fs.mkdtempSync(path.join(tmp, 'c-'))
        fs.chmodSync(cache, 0o777)
        const ms =
          side === 'A'
            ? await time(async () => {
                part(`${id} restore`, await time(() => store.restore(cache, 'warm', []).then()))
                sh('chmod', ['-R', 'a+rwX', cache])
                part(`${id} npm ci (warm)`, await time(() => npmCi(net, url, proj, cache)))
              })
            : await time(() => npmCi(net, url, proj, cache))
        ;(side === 'A' ? c.ours : c.baseline).push(ms)
        fs.rmSync(cache, { recursive: true, force: true })
      }
      // The first pair warmed up the machine: not counted.
      c.ours.shift()
      c.baseline.shift()
      results.push(c)
    }

    // C3: the agent image on a fresh runner.
    if (cases.has('C3') || cases.has('C3B')) await imageCase(tmp, results, built)

    const rows = results.map(summarize)
    process.stdout.write(formatTable(rows) + '\n')
    if (flags.markdown === true) process.stdout.write('\n' + formatMarkdown(rows) + '\n')
    for (const [name, ms] of parts) {
      const sorted = [...ms].sort((a, b) => a - b)
      process.stdout.write(
        `  ${name}: median ${sorted[Math.floor(sorted.length / 2)].toFixed(0)} ms\n`
      )
    }
  } finally {
    await registry?.remove({ force: true }).catch(() => undefined)
    await delay?.remove({ force: true }).catch(() => undefined)
    await docker
      .getNetwork(net)
      .remove()
      .catch(() => undefined)
    for (const id of new Set(built)) {
      try {
        sh('docker', ['rmi', '-f', id])
      } catch {
        // already gone
      }
    }
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

function removeImages(ids: Iterable<string>): void {
  for (const id of new Set(ids)) {
    try {
      sh('docker', ['rmi', '-f', id])
    } catch {
      // already gone
    }
  }
}

/**
 * C3: the agent image on a simulated fresh runner, on the real path: a base pinned by digest,
 * pulled from a registry (Debian's docker-registry on loopback, started here). The base is a copy
 * of the Node image flattened into one layer of its own (so that removing it removes its layers,
 * and never touches the shared images).
 *   C3   the base stays on the engine on both sides (a runner's pull of the base costs the same
 *        on both sides): the agent image removed, restored vs built
 *   C3b  the base removed too: both sides pull it from the registry first
 * Both sides start from an engine without the agent image; the restore side must end with the
 * saved image found by its key (no build), the other builds.
 */
async function imageCase(tmp: string, results: Comparison[], built: string[]): Promise<void> {
  // The classic builder: its cache is the engine's images, so removing them makes the next build
  // cold, as on a fresh runner. BuildKit keeps a cache of its own (and the base's layers in it)
  // that survives the removal of the images and cannot be emptied on a shared engine without
  // emptying everyone's. The restore side does not depend on the builder.
  const preset = flags['c3-image'] !== 'jq'
  const builderEnv = process.env.DOCKER_BUILDKIT
  process.env.DOCKER_BUILDKIT = '0'
  const port = await freePort()
  const registry = await startDockerRegistry(path.join(tmp, 'docker-registry'), port)
  let baseId: string | undefined
  try {
    const repo = `127.0.0.1:${port}/airlock-bench/node`
    const donor = sh('docker', [
      'create',
      '--label',
      'dev.airlock.bench=caches',
      preset ? 'airlock-local/node:24-npm' : 'airlock-local/node:18'
    ]).trim()
    try {
      execFileSync(
        'sh',
        ['-c', `docker export ${donor} | docker import - ${repo}:${path.basename(tmp)}`],
        { stdio: 'pipe' }
      )
    } finally {
      sh('docker', ['rm', '-f', donor])
    }
    baseId = sh('docker', [
      'image',
      'inspect',
      '-f',
      '{{.Id}}',
      `${repo}:${path.basename(tmp)}`
    ]).trim()
    sh('docker', ['push', '-q', `${repo}:${path.basename(tmp)}`])
    const pinned = sh('docker', [
      'image',
      'inspect',
      '-f',
      '{{range .RepoDigests}}{{println .}}{{end}}',
      baseId
    ])
      .split('\n')
      .find((d) => d.startsWith(`${repo}@sha256:`))
    if (pinned === undefined) throw new Error('the pushed base has no digest')
    // The base by its digest alone, as a runner that pulled it has it.
    sh('docker', ['rmi', `${repo}:${path.basename(tmp)}`])

    const ctx = path.join(tmp, 'image')
    fs.mkdirSync(ctx)
    fs.writeFileSync(
      path.join(ctx, 'Dockerfile'),
      preset
        ? fs.readFileSync(path.join(root, 'images', 'agents', 'claude-code', 'Dockerfile'))
        : `FROM ${pinned}\nUSER root\nRUN echo ${path.basename(tmp)} && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends jq >/dev/null && rm -rf /var/lib/apt/lists/*\n`
    )
    const plan: ImagePlan = {
      kind: 'build',
      dockerfile: path.join(ctx, 'Dockerfile'),
      context: ctx,
      buildArgs: preset ? { BASE: pinned } : {},
      allowUnpinnedBase: false
    }
    const store = new FolderStore(path.join(tmp, 'store-image'))
    const work = path.join(tmp, 'image-work')
    const first = await runtime.resolveImage(plan, quiet)
    built.push(first.id)
    const r0 = await restoreImage(runtime, store, 'local', plan, work, quiet)
    const saved = await saveImage(runtime, store, 'local', plan, first, r0!, work, quiet)
    if (saved.saved !== 'saved') throw new Error(`the image was not saved: ${saved.detail ?? ''}`)
    const file = path.join(tmp, 'store-image', saved.key, 'image.tar')
    process.stdout.write(
      `  C3 save file: ${(fs.statSync(file).size / 1e6).toFixed(1)} MB (the base: ${(
        ((await docker.getImage(baseId).inspect()).Size ?? 0) / 1e6
      ).toFixed(0)} MB, not in it)\n`
    )
    for (const [id, title, dropBase] of [
      ['C3', 'fresh runner, base on the engine: image restored vs cold build', false],
      ['C3b', 'fresh runner, base pulled too: image restored vs cold build', true]
    ] as const) {
      if (!cases.has(id.toUpperCase())) continue
      const c: Comparison = { id, title, target: 0.2, ours: [], baseline: [] }
      for (const side of interleavedSchedule(rounds + 1)) {
        removeImages(built)
        if (dropBase) removeImages([baseId])
        const ms = await time(async () => {
          if (side === 'A') {
            const t = performance.now()
            const r = await restoreImage(runtime, store, 'local', plan, work, quiet)
            if (r?.use.restored !== saved.key)
              throw new Error(`not restored: ${r?.use.detail ?? 'no cache'}`)
            part(`${id} restore (pull base, copy, load, checks)`, performance.now() - t)
          }
          const got = await runtime.resolveImage(plan, quiet)
          if (side === 'A' && (got.id !== first.id || !got.cached))
            throw new Error('the restored image was not used')
          built.push(got.id)
        })
        ;(side === 'A' ? c.ours : c.baseline).push(ms)
      }
      c.ours.shift()
      c.baseline.shift()
      results.push(c)
    }
  } finally {
    removeImages(built)
    if (baseId !== undefined) removeImages([baseId])
    await stopDockerRegistry(registry)
    if (builderEnv === undefined) delete process.env.DOCKER_BUILDKIT
    else process.env.DOCKER_BUILDKIT = builderEnv
  }
}

await main()
