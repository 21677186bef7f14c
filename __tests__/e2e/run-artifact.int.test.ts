/**
 * The bundled action run as the runner runs it (`node index.js`, INPUT_* variables, an event
 * payload, GITHUB_OUTPUT), on a real Docker engine, uploading its output folder with the real
 * artifact client to the local results service stand-in (Azurite behind it). The pull request's
 * head loosens `.github/airlock.yml`; the base commit's policy is the one that applies.
 */
import { execFileSync, spawn } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { jest } from '@jest/globals'
import { DefaultArtifactClient } from '@actions/artifact'
import { git as testGit } from '../support/git.js'
import { startResultsService } from '../support/results-service.js'
import type { ResultsService } from '../support/results-service.js'

jest.setTimeout(300_000)

const BUSYBOX = 'airlock-local/busybox:1'
let service: ResultsService
let root: string
let bundle: string
let workspace: string
let baseSha: string
let headSha: string
let basePolicyBlob: string

function git(cwd: string, ...args: string[]): string {
  return testGit(cwd, ...args).trim()
}

beforeAll(async () => {
  root = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'airlock-e2e-artifact-'))
  bundle = path.join(root, 'dist')
  execFileSync(process.execPath, ['scripts/build.mjs', bundle], { stdio: 'inherit' })
  service = await startResultsService()

  workspace = path.join(root, 'ws')
  const repo = path.join(workspace, 'repo')
  await fs.promises.mkdir(path.join(repo, '.github'), { recursive: true })
  git(repo, 'init', '-q', '-b', 'main')
  await fs.promises.writeFile(path.join(repo, 'README.md'), 'base\n')
  await fs.promises.writeFile(
    path.join(repo, '.github', 'airlock.yml'),
    'version: 1\nmemory: 96m\npids-limit: 64\ntimeout-minutes: 3\nallow-self-approval: false\n'
  )
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '-m', 'base with a strict policy')
  baseSha = git(repo, 'rev-parse', 'HEAD')
  basePolicyBlob = git(repo, 'rev-parse', 'HEAD:.github/airlock.yml')
  // The pull request's head tries to loosen the policy.
  await fs.promises.writeFile(
    path.join(repo, '.github', 'airlock.yml'),
    'version: 1\nmemory: 4g\npids-limit: 4096\ntimeout-minutes: 600\nallow-self-approval: true\n'
  )
  git(repo, 'commit', '-q', '-am', 'loosen the policy')
  headSha = git(repo, 'rev-parse', 'HEAD')

  const imageId = execFileSync('docker', ['image', 'inspect', '-f', '{{.Id}}', BUSYBOX])
    .toString()
    .trim()
  await fs.promises.mkdir(path.join(workspace, 'agent'))
  await fs.promises.writeFile(
    path.join(workspace, 'agent', 'Dockerfile'),
    'ARG BASE\nFROM ${BASE}\n'
  )
  await fs.promises.writeFile(
    path.join(root, 'event.json'),
    JSON.stringify({
      action: 'synchronize',
      number: 7,
      pull_request: {
        number: 7,
        head: { sha: headSha, ref: 'feature', repo: { full_name: 'octo/repo' } },
        base: { sha: baseSha, ref: 'main', repo: { full_name: 'octo/repo' } }
      },
      repository: { full_name: 'octo/repo' }
    })
  )
  process.env.AIRLOCK_E2E_IMAGE_ID = imageId
})

afterAll(async () => {
  await service?.close()
  if (root !== undefined) await fs.promises.rm(root, { recursive: true, force: true })
})

let runCount = 0
async function runAction(
  extra: Record<string, string>
): Promise<{ code: number | null; stdout: string; outputs: Record<string, string>; out: string }> {
  runCount++
  const outputFile = path.join(root, `output-${runCount}.txt`)
  await fs.promises.writeFile(outputFile, '')
  const outDir = `out-${runCount}`
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: root,
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: workspace,
    GITHUB_EVENT_NAME: 'pull_request',
    GITHUB_EVENT_PATH: path.join(root, 'event.json'),
    GITHUB_OUTPUT: outputFile,
    GITHUB_REPOSITORY: 'octo/repo',
    GITHUB_RUN_ID: '4242',
    GITHUB_RUN_ATTEMPT: String(runCount),
    RUNNER_TEMP: root,
    ...service.env,
    INPUT_PATH: 'repo',
    INPUT_REF: headSha,
    'INPUT_OUTPUT-DIR': outDir,
    INPUT_DOCKERFILE: 'agent/Dockerfile',
    'INPUT_BUILD-ARGS': `BASE=${process.env.AIRLOCK_E2E_IMAGE_ID}`,
    'INPUT_AGENT-COMMAND': 'echo hello > hello.txt',
    'INPUT_RUN-ID': `e2e-art-${process.pid}-${runCount}`,
    INPUT_CPUS: '1',
    ...extra
  }
  const child = spawn(process.execPath, [path.join(bundle, 'index.js')], { env, cwd: workspace })
  let stdout = ''
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr.on('data', (c: Buffer) => (stdout += c.toString()))
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  const outputs: Record<string, string> = {}
  const text = await fs.promises.readFile(outputFile, 'utf8')
  const re = /^([^\n<]+)<<(\S+)\n([\s\S]*?)\n\2$/gm
  for (let m = re.exec(text); m !== null; m = re.exec(text)) outputs[m[1]] = m[3]
  return { code, stdout, outputs, out: path.join(workspace, outDir) }
}

beforeEach(() => {
  service.faults.length = 0
  service.alwaysFail.length = 0
  service.requests.length = 0
})
afterEach(() => expect(service.violations).toEqual([]))

test('run mode uploads the output folder; outputs, artifact.json and the downloaded contents agree; the base policy applies', async () => {
  const r = await runAction({})
  expect({ code: r.code, tail: r.stdout.slice(-2000) }).toMatchObject({ code: 0 })
  expect(r.outputs['artifact-name']).toBe('airlock-4242-1')
  const id = Number(r.outputs['artifact-id'])
  expect(id).toBeGreaterThan(0)
  expect(r.outputs['artifact-url']).toBe(
    `https://github.com/octo/repo/actions/runs/4242/artifacts/${id}`
  )
  const record = JSON.parse(await fs.promises.readFile(path.join(r.out, 'artifact.json'), 'utf8'))
  expect(record).toMatchObject({ status: 'uploaded', id, name: 'airlock-4242-1' })

  // Download with the real client, as a later job would, and compare with the local folder.
  const into = path.join(root, 'download-1')
  const prev = { ...process.env }
  Object.assign(process.env, service.env)
  try {
    await new DefaultArtifactClient().downloadArtifact(id, { path: into })
  } finally {
    for (const k of Object.keys(service.env)) if (!(k in prev)) delete process.env[k]
  }
  for (const f of ['report.json', 'diff.patch', 'comment.md', 'task.md', 'logs/agent.log']) {
    const local = await fs.promises.readFile(path.join(r.out, f))
    const remote = await fs.promises.readFile(path.join(into, f))
    expect({ f, same: local.equals(remote) }).toEqual({ f, same: true })
  }
  expect(fs.existsSync(path.join(into, 'artifact.json'))).toBe(false)
  const diff = await fs.promises.readFile(path.join(into, 'diff.patch'), 'utf8')
  expect(diff).toContain('+hello')

  // The head's loosened policy file did not apply; the base commit's did.
  const report = JSON.parse(await fs.promises.readFile(path.join(into, 'report.json'), 'utf8'))
  expect(report.sandbox.memory).toBe(96 * 1024 * 1024)
  expect(report.sandbox.pidsLimit).toBe(64)
  expect(report.policy.source).toMatchObject({
    path: '.github/airlock.yml',
    base: baseSha,
    commit: baseSha,
    blobSha: basePolicyBlob,
    via: 'git',
    overridden: []
  })
  expect(report.policy.source.settings).toEqual(
    ['allow-self-approval', 'memory', 'pids-limit', 'timeout-minutes'].sort()
  )
  expect(r.stdout).toContain(`policy: .github/airlock.yml blob ${basePolicyBlob}`)
})

test('an explicit input overrides the policy, and the report says so', async () => {
  const r = await runAction({ 'INPUT_PIDS-LIMIT': '100', 'INPUT_DRY-RUN': 'true' })
  expect(r.code).toBe(0)
  const report = JSON.parse(await fs.promises.readFile(path.join(r.out, 'report.json'), 'utf8'))
  expect(report.sandbox.pidsLimit).toBe(100)
  expect(report.sandbox.memory).toBe(96 * 1024 * 1024)
  expect(report.policy.source.overridden).toEqual(['pids-limit'])
})

test('dry-run uploads nothing and records why', async () => {
  const r = await runAction({ 'INPUT_DRY-RUN': 'true' })
  expect(r.code).toBe(0)
  expect(service.requests).toEqual([])
  expect(r.outputs['artifact-id']).toBeUndefined()
  const record = JSON.parse(await fs.promises.readFile(path.join(r.out, 'artifact.json'), 'utf8'))
  expect(record).toMatchObject({ status: 'skipped', name: `airlock-4242-${runCount}` })
})

test('a failed upload fails the step, keeps the evidence and records the error', async () => {
  service.alwaysFail.push({
    method: 'CreateArtifact',
    kind: 'status',
    status: 403,
    code: 'permission_denied',
    msg: 'artifact uploads are disabled'
  })
  const r = await runAction({ 'INPUT_ARTIFACT-NAME': 'evidence-custom' })
  expect(r.code).toBe(1)
  expect(r.stdout).toMatch(/::error::artifact evidence-custom was not uploaded.*403/)
  expect(r.outputs['artifact-name']).toBe('evidence-custom')
  expect(r.outputs['artifact-id']).toBeUndefined()
  expect(fs.existsSync(path.join(r.out, 'report.json'))).toBe(true)
  const record = JSON.parse(await fs.promises.readFile(path.join(r.out, 'artifact.json'), 'utf8'))
  expect(record).toMatchObject({ status: 'failed', name: 'evidence-custom' })
  expect(record.error).toMatch(/artifact uploads are disabled/)
})
