// The caches' benchmark (`npm run bench -- --only caches`): interleaved pairs, medians, ratios.
//
//   C1  warm install: the dependency cache restored (FolderStore) + `npm ci` of the demo project
//       vs  cold `npm ci` with an empty cache, both against a local Verdaccio
//   C2  the same with a lockfile of ~500 packages (generated here into Verdaccio's storage)
//   C3  a simulated fresh runner: the agent image removed, loaded from the image cache, checked,
//       found by resolveImage  vs  a cold build of the same Dockerfile (the image removed)
//
// The installs run in a container of the Node image with the install phase's cache variables
// (CACHE_ENV), on an internal network whose only other member is the registry.
import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
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

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    packages: { type: 'string', default: '500' },
    markdown: { type: 'boolean', default: false },
    cases: { type: 'string', default: 'C1,C2,C3' }
  },
  strict: false
})
const rounds = Number(flags.rounds)
const cases = new Set(String(flags.cases).toUpperCase().split(','))
/** Where the warm side's time goes: each step's times, for the medians printed after the table. */
const parts = new Map<string, number[]>()
function part(name: string, ms: number): void {
  parts.set(name, [...(parts.get(name) ?? []), ms])
}
const docker = new Docker()
const runtime = new DockerRuntime(docker)
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
      'index.js': `module.exports = ${JSON.stringify(name)}\n// ${'x'.repeat(2000)}\n`
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
    const url = `http://${ip}:4873/`
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${url}-/ping`)).ok) break
      } catch {
        if (i > 120) throw new Error('Verdaccio did not start')
      }
      await new Promise((r) => setTimeout(r, 500))
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
    if (cases.has('C3')) await imageCase(tmp, results, built)

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

/** C3: the agent image on a simulated fresh runner. */
async function imageCase(tmp: string, results: Comparison[], built: string[]): Promise<void> {
  const ctx = path.join(tmp, 'image')
  fs.mkdirSync(ctx)
  const base = sh('docker', ['image', 'inspect', '-f', '{{.Id}}', 'airlock-local/node:18']).trim()
  fs.writeFileSync(
    path.join(ctx, 'Dockerfile'),
    `FROM ${base}\nRUN echo ${path.basename(tmp)} && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends jq >/dev/null && rm -rf /var/lib/apt/lists/*\n`
  )
  const plan: ImagePlan = {
    kind: 'build',
    dockerfile: path.join(ctx, 'Dockerfile'),
    context: ctx,
    buildArgs: {},
    allowUnpinnedBase: false
  }
  const store = new FolderStore(path.join(tmp, 'store-image'))
  const work = path.join(tmp, 'image-work')
  const first = await runtime.resolveImage(plan, quiet)
  built.push(first.id)
  const r0 = await restoreImage(runtime, store, 'local', plan, work, quiet)
  await saveImage(runtime, store, 'local', plan, first, r0!, work, quiet)
  const c3: Comparison = {
    id: 'C3',
    title: 'fresh runner: image loaded from the cache vs cold build',
    target: 0.2,
    ours: [],
    baseline: []
  }
  for (const side of interleavedSchedule(rounds + 1)) {
    for (const id of new Set([first.id, ...built])) {
      try {
        sh('docker', ['rmi', '-f', id])
      } catch {
        // already gone
      }
    }
    const ms = await time(async () => {
      if (side === 'A') await restoreImage(runtime, store, 'local', plan, work, quiet)
      const got = await runtime.resolveImage(plan, quiet)
      if (got.id !== first.id && side === 'A') throw new Error('the restored image was not used')
      built.push(got.id)
    })
    ;(side === 'A' ? c3.ours : c3.baseline).push(ms)
  }
  c3.ours.shift()
  c3.baseline.shift()
  results.push(c3)
}

await main()
