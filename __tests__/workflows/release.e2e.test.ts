// The release workflow (.github/workflows/release.yml) run as GitHub runs it, against the GitHub
// stand-in and a real registry on loopback: its own steps (the image's name, the records read back
// from the registry by digest, the table, the release commit, the tags, the notes, the release)
// execute as written; the third-party actions are emulated for the inputs the workflow gives them
// (build-push-action pushes a two-platform index of a stand-in image to the loopback registry;
// nothing reaches ghcr.io). Order: images first, then the commit that names them, then the tags.
import { execFileSync } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { TOKEN, makeWorld, webhook, type World } from '../../__fixtures__/action-harness.js'
import { remoteOf } from '../../__fixtures__/preset-run.js'
import { runJob, type RunnerSetup } from '../../__fixtures__/workflow-run.js'
import {
  ROOT,
  githubContext,
  loadWorkflow,
  type Contexts,
  type EvaluatedStep
} from '../../__fixtures__/workflows.js'
import {
  freePort,
  startDockerRegistry,
  stopDockerRegistry
} from '../../scripts/docker-registry.mjs'
import { parsePublished } from '../../src/presets/published.js'
import { BUSYBOX } from '../support/run.js'

const PRESETS = ['claude-code', 'codex', 'gemini-cli']
const VERSION = '1.0.0'
const sh = (cmd: string, args: string[], cwd?: string): string =>
  execFileSync(cmd, args, {
    ...(cwd !== undefined ? { cwd } : {}),
    stdio: ['ignore', 'pipe', 'pipe']
  })
    .toString()
    .trim()

let registry: ChildProcess
let port: number
let tmp: string
let world: World
const pushed: Record<string, { digest: string; manifest: string }> = {}
const attested: Record<string, string>[] = []
const built: Record<string, string>[] = []
const localTags: string[] = []

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-release-'))
  port = await freePort()
  registry = await startDockerRegistry(path.join(tmp, 'registry'), port)
  // Agent Airlock's repository as the release needs it: the preset folders, the table, the
  // release script, the version in package.json and its CHANGELOG section.
  const files: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'agent-airlock', version: VERSION }, null, 2) + '\n',
    'CHANGELOG.md': `# Changelog\n\n## [Unreleased]\n\n## [${VERSION}]\n\n- The first stable release.\n\n## [0.1.0]\n\n- Before.\n`,
    'scripts/release.mjs': fs.readFileSync(path.join(ROOT, 'scripts/release.mjs'), 'utf8'),
    'images/published.json': fs.readFileSync(path.join(ROOT, 'images/published.json'), 'utf8')
  }
  for (const p of PRESETS)
    for (const f of fs.readdirSync(path.join(ROOT, 'images/agents', p)))
      files[`images/agents/${p}/${f}`] = fs.readFileSync(
        path.join(ROOT, 'images/agents', p, f),
        'utf8'
      )
  world = await makeWorld(files)
  // An earlier major tag, which the release moves.
  sh('git', ['--git-dir', remoteOf(world), 'tag', 'v1', world.base])
}, 120_000)

afterAll(async () => {
  for (const t of localTags) spawnQuiet('docker', ['rmi', t])
  if (registry) await stopDockerRegistry(registry)
  await world?.close()
  fs.rmSync(tmp, { recursive: true, force: true })
})

function spawnQuiet(cmd: string, args: string[]): void {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' })
  } catch {
    // already gone
  }
}

/** build-push-action for the inputs the workflow gives it: a two-platform index, pushed. */
async function buildPush(step: EvaluatedStep, workspace: string, outputFile: string) {
  const w = step.with
  built.push({ ...w })
  const preset = path.basename(w.context)
  // The context is the preset's folder of the checkout, with its pinned Dockerfile.
  const dockerfile = fs.readFileSync(path.join(workspace, w.context, 'Dockerfile'), 'utf8')
  expect(dockerfile).toMatch(/^ARG BASE=node:24-bookworm-slim@sha256:[a-f0-9]{64}$/m)
  const [name, tag] = w.tags.split(':')
  const local = name.replace(/^ghcr\.io\//, `127.0.0.1:${port}/`)
  // A stand-in of the preset's image (this machine reaches neither Docker Hub nor arm64): busybox
  // with the preset's Dockerfile in it, pushed, then an index naming it for both platforms and an
  // attestation manifest, as buildx pushes one with sbom and provenance.
  const ctx = fs.mkdtempSync(path.join(tmp, 'ctx-'))
  fs.writeFileSync(path.join(ctx, 'Dockerfile.preset'), dockerfile)
  fs.writeFileSync(path.join(ctx, 'Dockerfile'), `FROM ${BUSYBOX}\nCOPY Dockerfile.preset /\n`)
  sh('docker', ['build', '-q', '-t', `${local}:${tag}-amd64`, ctx])
  localTags.push(`${local}:${tag}-amd64`)
  sh('docker', ['push', '-q', `${local}:${tag}-amd64`])
  const repo = local.slice(local.indexOf('/') + 1)
  const head = await fetch(`http://127.0.0.1:${port}/v2/${repo}/manifests/${tag}-amd64`, {
    headers: { accept: 'application/vnd.docker.distribution.manifest.v2+json' }
  })
  const manifest = Buffer.from(await head.arrayBuffer())
  const entry = (platform: { os: string; architecture: string }) => ({
    mediaType: head.headers.get('content-type'),
    digest: head.headers.get('docker-content-digest'),
    size: manifest.length,
    platform
  })
  const index = JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: [
      entry({ os: 'linux', architecture: 'amd64' }),
      entry({ os: 'linux', architecture: 'arm64' }),
      {
        ...entry({ os: 'unknown', architecture: 'unknown' }),
        annotations: { 'vnd.docker.reference.type': 'attestation-manifest' }
      }
    ]
  })
  const put = await fetch(`http://127.0.0.1:${port}/v2/${repo}/manifests/${tag}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/vnd.oci.image.index.v1+json' },
    body: index
  })
  expect(put.status).toBe(201)
  const digest = put.headers.get('docker-content-digest') as string
  pushed[preset] = { digest, manifest: head.headers.get('docker-content-digest') as string }
  fs.appendFileSync(outputFile, `digest=${digest}\nimageid=${digest}\n`)
  return { code: 0 }
}

function setupFor(artifacts: string): RunnerSetup {
  return {
    remote: remoteOf(world),
    root: world.root,
    eventName: 'workflow_dispatch',
    payload: {},
    sha: world.base,
    ref: 'refs/heads/main',
    apiUrl: world.api.url,
    token: TOKEN,
    artifactEnv: {},
    // Where the registry is read (the release script reads ghcr.io's API; here the loopback one).
    machineEnv: { AIRLOCK_RELEASE_REGISTRY_URL: `http://127.0.0.1:${port}` },
    emulate: async (step, io) => {
      const u = step.uses ?? ''
      if (/^docker\/(setup-qemu|setup-buildx|login)-action@|^actions\/setup-node@/.test(u))
        return { code: 0 }
      if (u.startsWith('docker/build-push-action@'))
        return buildPush(step, io.workspace, io.outputFile)
      if (u.startsWith('actions/attest-build-provenance@')) {
        attested.push({ ...step.with })
        return { code: 0 }
      }
      if (u.startsWith('actions/upload-artifact@')) {
        const dest = path.join(artifacts, step.with.name)
        fs.mkdirSync(dest, { recursive: true })
        fs.cpSync(
          path.join(io.workspace, step.with.path),
          path.join(dest, path.basename(step.with.path))
        )
        return { code: 0 }
      }
      if (u.startsWith('actions/download-artifact@')) {
        const prefix = step.with.pattern.replace(/\*$/, '')
        const dest = path.join(io.workspace, step.with.path)
        fs.mkdirSync(dest, { recursive: true })
        for (const name of fs.readdirSync(artifacts).filter((n) => n.startsWith(prefix)))
          for (const f of fs.readdirSync(path.join(artifacts, name)))
            fs.cpSync(path.join(artifacts, name, f), path.join(dest, f))
        return { code: 0 }
      }
      return undefined
    }
  }
}

test('a release: images by digest with attestations, then the commit naming them, then v1.0.0 and v1, then the release', async () => {
  const w = await loadWorkflow('.github/workflows/release.yml')
  const event = webhook('workflow_dispatch', undefined, (p) => {
    p.inputs = { version: VERSION }
  })
  const ctx: Contexts = {
    github: githubContext('workflow_dispatch', event, {
      sha: world.base,
      ref: 'refs/heads/main',
      token: TOKEN
    }),
    inputs: { version: VERSION }
  }
  const artifacts = fs.mkdtempSync(path.join(tmp, 'artifacts-'))
  const setup = setupFor(artifacts)

  // The images job, once per preset of the matrix.
  for (const preset of PRESETS) {
    const job = await runJob(w, 'images', { ...ctx, matrix: { preset } }, setup)
    const log = job.steps.map((s) => `${s.stdout}${s.stderr}`).join('\n')
    expect([preset, job.result, log]).toEqual([preset, 'success', expect.any(String)])
  }
  for (const b of built) {
    expect(b).toMatchObject({ platforms: 'linux/amd64,linux/arm64', push: 'true', sbom: 'true' })
    expect(b.tags).toMatch(/^ghcr\.io\/octo-org\/hello\/(claude-code|codex|gemini-cli):1\.0\.0$/)
  }
  // Every image's provenance attested by its digest, stored with the image.
  expect(
    attested.map((a) => [a['subject-name'], a['subject-digest'], a['push-to-registry']])
  ).toEqual(PRESETS.map((p) => [`ghcr.io/octo-org/hello/${p}`, pushed[p].digest, 'true']))

  // The check job's key step, as it runs there (the action's own code computes them).
  const keys = sh(process.execPath, [path.join(ROOT, 'scripts/release.mjs'), 'keys'], ROOT)
  const release = await runJob(
    w,
    'release',
    {
      ...ctx,
      needs: {
        check: { result: 'success', outputs: { keys } },
        images: { result: 'success', outputs: {} }
      }
    },
    setup
  )
  const log = release.steps.map((s) => `${s.stdout}${s.stderr}`).join('\n')
  expect([release.result, log]).toEqual(['success', expect.any(String)])

  // The tag names a new commit on top of the checked one that changes only the table.
  const git = (...a: string[]): string => sh('git', ['--git-dir', remoteOf(world), ...a])
  const tagged = git('rev-parse', `v${VERSION}^{commit}`)
  expect(git('rev-parse', `${tagged}^`)).toBe(world.base)
  expect(git('diff', '--name-only', world.base, tagged)).toBe('images/published.json')
  expect(git('cat-file', '-t', `v${VERSION}`)).toBe('tag') // annotated
  // The major tag moved to it; main did not move.
  expect(git('rev-parse', 'v1^{commit}')).toBe(tagged)
  expect(git('rev-parse', 'refs/heads/main')).toBe(world.base)
  // The table at the release commit: the action's own parser accepts it, and it names exactly
  // the images pushed, by the digest of their index and of each platform.
  const table = parsePublished(git('show', `${tagged}:images/published.json`))
  expect(table.version).toBe(VERSION)
  expect(table.repository).toBe('octo-org/hello')
  const k = JSON.parse(keys) as Record<string, string>
  for (const p of PRESETS)
    expect(table.images[p]).toEqual({
      image: `ghcr.io/octo-org/hello/${p}`,
      digest: pushed[p].digest,
      platforms: { 'linux/amd64': pushed[p].manifest, 'linux/arm64': pushed[p].manifest },
      inputsKey: k[p]
    })
  // The GitHub release of the tag, with the CHANGELOG section and the images by digest.
  expect(world.api.releases).toHaveLength(1)
  const r = world.api.releases[0]
  expect(r).toMatchObject({ tag_name: `v${VERSION}`, commit: tagged, prerelease: false })
  expect(r.body).toContain('- The first stable release.')
  expect(r.body).not.toContain('Before.')
  for (const p of PRESETS)
    expect(r.body).toContain(`ghcr.io/octo-org/hello/${p}@${pushed[p].digest}`)
  // Without NPM_TOKEN nothing is published, and it says so.
  expect(log).toContain('no NPM_TOKEN secret')
  expect(world.api.violations).toEqual([])
}, 600_000)
