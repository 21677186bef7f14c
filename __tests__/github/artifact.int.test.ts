/**
 * The real `@actions/artifact` client uploading the output folder to a local stand-in of the
 * results service backed by Azurite, then downloading it again.
 */
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { jest } from '@jest/globals'
import { DefaultArtifactClient } from '@actions/artifact'
import {
  ARTIFACT_RECORD_FILE,
  findArtifact,
  readArtifactRecord,
  uploadOutputFolder,
  writeArtifactRecord
} from '../../src/github/client/artifact.js'
import { startResultsService } from '../support/results-service.js'
import type { ResultsService } from '../support/results-service.js'
import { parseEvent } from '../../src/event.js'
import type { RunEvent } from '../../src/event.js'

jest.setTimeout(120_000)

let service: ResultsService
let work: string
const saved = { ...process.env }

beforeAll(async () => {
  service = await startResultsService()
})
afterAll(async () => {
  await service?.close()
})
beforeEach(async () => {
  work = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'airlock-artifact-test-'))
  Object.assign(process.env, service.env, {
    GITHUB_REPOSITORY: 'octo/repo',
    GITHUB_RUN_ID: '777',
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_WORKSPACE: work
  })
  delete process.env.GITHUB_SERVER_URL
  service.faults.length = 0
  service.alwaysFail.length = 0
  service.requests.length = 0
})
afterEach(async () => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
  Object.assign(process.env, saved)
  if (work !== undefined) await fs.promises.rm(work, { recursive: true, force: true })
  expect(service?.violations).toEqual([])
})

/** The event as the runner's variables of the test describe it. */
const runEvent = (): RunEvent => parseEvent(process.env, undefined)

let counter = 0
function uniqueName(): string {
  return `airlock-test-${process.pid}-${++counter}`
}

async function outputFolder(): Promise<{ dir: string; files: Record<string, Buffer> }> {
  const dir = path.join(work, 'airlock-out')
  const files: Record<string, Buffer> = {
    'report.json': Buffer.from('{"schemaVersion":1,"outcome":"success"}\n'),
    'diff.patch': Buffer.from('diff --git a/x b/x\n'),
    'comment.md': Buffer.from('## Agent Airlock\n'),
    'logs/agent.log': Buffer.from('agent | hello\n'),
    'logs/tests.log': Buffer.alloc(0),
    'blob.bin': randomBytes(300_000)
  }
  for (const [rel, content] of Object.entries(files)) {
    await fs.promises.mkdir(path.dirname(path.join(dir, rel)), { recursive: true })
    await fs.promises.writeFile(path.join(dir, rel), content)
  }
  // Things that must never be uploaded: a symlink out of the folder, a FIFO, a stale record.
  await fs.promises.symlink('/etc/passwd', path.join(dir, 'passwd-link'))
  execFileSync('mkfifo', [path.join(dir, 'logs', 'fifo')])
  await fs.promises.writeFile(path.join(dir, ARTIFACT_RECORD_FILE), '{"status":"stale"}')
  return { dir, files }
}

async function download(id: number): Promise<Record<string, Buffer>> {
  const into = path.join(work, 'download')
  await new DefaultArtifactClient().downloadArtifact(id, { path: into })
  const out: Record<string, Buffer> = {}
  const walk = async (d: string): Promise<void> => {
    for (const e of await fs.promises.readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) await walk(p)
      else out[path.relative(into, p)] = await fs.promises.readFile(p)
    }
  }
  await walk(into)
  return out
}

const fast = { retryDelayMs: 50 }

test('uploads the whole folder as one artifact; the download has exactly its regular files', async () => {
  const { dir, files } = await outputFolder()
  const name = uniqueName()
  const record = await uploadOutputFolder(dir, { name, ...fast, event: runEvent() })
  expect(record).toMatchObject({ status: 'uploaded', name, attempts: 1 })
  if (record.status !== 'uploaded') throw new Error('not uploaded')
  const stored = service.artifacts().find((a) => a.name === name)
  expect(stored?.finalized).toBe(true)
  expect(record.id).toBe(stored?.id)
  expect(record.url).toBe(`https://github.com/octo/repo/actions/runs/777/artifacts/${record.id}`)
  expect(record.digest).toMatch(/^[0-9a-f]{64}$/)
  expect(`sha256:${record.digest}`).toBe(stored?.hash)

  const got = await download(record.id)
  expect(Object.keys(got).sort()).toEqual(Object.keys(files).sort())
  for (const [rel, content] of Object.entries(files)) expect(got[rel].equals(content)).toBe(true)

  await writeArtifactRecord(dir, record)
  expect(await readArtifactRecord(dir)).toEqual(record)
})

test('each run attempt has its own name; the same name twice is refused by the service, not retried', async () => {
  const { dir } = await outputFolder()
  const first = await uploadOutputFolder(dir, { name: 'airlock-900-1', ...fast, event: runEvent() })
  const second = await uploadOutputFolder(dir, {
    name: 'airlock-900-2',
    ...fast,
    event: runEvent()
  })
  expect(first.status).toBe('uploaded')
  expect(second.status).toBe('uploaded')

  service.requests.length = 0
  const again = await uploadOutputFolder(dir, { name: 'airlock-900-1', ...fast, event: runEvent() })
  expect(again).toMatchObject({ status: 'failed', attempts: 1 })
  if (again.status !== 'failed') throw new Error('unexpected')
  expect(again.error).toMatch(/409/)
  expect(again.error).toMatch(/set artifact-name/)
  expect(service.requests.filter((r) => r.method === 'CreateArtifact')).toHaveLength(1)
})

test('a dropped connection (not retried by the client) is retried as a new attempt', async () => {
  const { dir } = await outputFolder()
  service.faults.push({ method: 'CreateArtifact', kind: 'reset' })
  const name = uniqueName()
  const record = await uploadOutputFolder(dir, { name, ...fast, event: runEvent() })
  expect(record).toMatchObject({ status: 'uploaded', attempts: 2 })
  expect(
    service.requests.filter((r) => r.method === 'CreateArtifact').map((r) => r.status)
  ).toEqual(['reset', 200])
})

test('a 503 is retried by the client itself within one attempt', async () => {
  const { dir } = await outputFolder()
  service.faults.push({
    method: 'CreateArtifact',
    kind: 'status',
    status: 503,
    code: 'unavailable',
    msg: 'try again'
  })
  const record = await uploadOutputFolder(dir, { name: uniqueName(), ...fast, event: runEvent() })
  expect(record).toMatchObject({ status: 'uploaded', attempts: 1 })
  expect(
    service.requests.filter((r) => r.method === 'CreateArtifact').map((r) => r.status)
  ).toEqual([503, 200])
})

test('when the answer to FinalizeArtifact is lost, the next attempt finds the artifact instead of uploading twice', async () => {
  const { dir } = await outputFolder()
  service.faults.push({ method: 'FinalizeArtifact', kind: 'reset-after' })
  const name = uniqueName()
  const record = await uploadOutputFolder(dir, { name, ...fast, event: runEvent() })
  expect(record).toMatchObject({ status: 'uploaded', attempts: 2 })
  const stored = service.artifacts().filter((a) => a.name === name)
  expect(stored).toHaveLength(1)
  if (record.status === 'uploaded') expect(record.id).toBe(stored[0].id)
  expect(service.requests.map((r) => r.method)).toEqual([
    'CreateArtifact',
    'FinalizeArtifact',
    'ListArtifacts'
  ])
})

test('a permanent refusal fails at once and is recorded with the error', async () => {
  const { dir } = await outputFolder()
  service.alwaysFail.push({
    method: 'CreateArtifact',
    kind: 'status',
    status: 403,
    code: 'permission_denied',
    msg: 'token lacks the scope'
  })
  const record = await uploadOutputFolder(dir, { name: uniqueName(), ...fast, event: runEvent() })
  expect(record).toMatchObject({ status: 'failed', attempts: 1 })
  if (record.status !== 'failed') throw new Error('unexpected')
  expect(record.error).toMatch(/403/)
  expect(record.error).toMatch(/token lacks the scope/)
  await writeArtifactRecord(dir, record)
  expect(await readArtifactRecord(dir)).toEqual(record)
})

test('a connection that keeps dropping fails after the configured attempts', async () => {
  const { dir } = await outputFolder()
  service.alwaysFail.push({ method: 'CreateArtifact', kind: 'reset' })
  const record = await uploadOutputFolder(dir, {
    name: uniqueName(),
    attempts: 3,
    ...fast,
    event: runEvent()
  })
  expect(record).toMatchObject({ status: 'failed', attempts: 3 })
  if (record.status !== 'failed') throw new Error('unexpected')
  expect(record.error).toMatch(/ECONNRESET/)
  expect(service.requests.filter((r) => r.method === 'CreateArtifact')).toHaveLength(3)
  expect(service.artifacts().filter((a) => a.finalized && a.name === record.name)).toHaveLength(0)
})

test('without the runtime token the upload fails clearly, without retrying', async () => {
  const { dir } = await outputFolder()
  delete process.env.ACTIONS_RUNTIME_TOKEN
  const record = await uploadOutputFolder(dir, { name: uniqueName(), ...fast, event: runEvent() })
  expect(record).toMatchObject({ status: 'failed', attempts: 1 })
  if (record.status === 'failed') expect(record.error).toMatch(/ACTIONS_RUNTIME_TOKEN/)
  expect(service.requests).toHaveLength(0)
})

test('a later job finds the artifact by name; a missing one is a failed record', async () => {
  const { dir } = await outputFolder()
  const name = uniqueName()
  const record = await uploadOutputFolder(dir, { name, ...fast, event: runEvent() })
  const found = await findArtifact(name, { event: runEvent() })
  expect(found).toMatchObject({ status: 'uploaded', name, attempts: 0 })
  if (found.status === 'uploaded' && record.status === 'uploaded') {
    expect(found.id).toBe(record.id)
    expect(found.url).toBe(record.url)
  }
  const missing = await findArtifact(`${name}-missing`)
  expect(missing).toMatchObject({ status: 'failed', attempts: 0 })
  if (missing.status === 'failed') expect(missing.error).toMatch(/not found/i)
})

test('an artifact whose retention ran out is gone, as on GitHub: not found by name, no download', async () => {
  const { dir } = await outputFolder()
  const name = uniqueName()
  const record = await uploadOutputFolder(dir, { name, ...fast })
  expect(record.status).toBe('uploaded')
  service.expire(name)
  const found = await findArtifact(name)
  expect(found).toMatchObject({ status: 'failed', attempts: 0 })
  if (found.status === 'failed') expect(found.error).toMatch(/not found/i)
  await expect(new DefaultArtifactClient().getArtifact(name)).rejects.toThrow(/not found/i)
})
