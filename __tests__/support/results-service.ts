/**
 * A local stand-in of GitHub Actions' results service (the Twirp ArtifactService that
 * `@actions/artifact` talks to), backed by a real Azurite blob emulator for the uploads and
 * downloads. It checks every request the way the service would (route, method, bearer token,
 * JSON field names and types, the backend ids of the token) and records anything it would have
 * rejected in `violations`, so a test can assert that the client behaved.
 *
 * Faults can be queued per RPC: an HTTP error answer, a dropped connection before the request is
 * handled, or a dropped connection after it was handled (the answer is lost).
 */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { createHash, randomUUID } from 'node:crypto'
import * as fs from 'node:fs'
import * as http from 'node:http'
import * as net from 'node:net'
import * as os from 'node:os'
import * as path from 'node:path'
import {
  BlobSASPermissions,
  BlobServiceClient,
  SASProtocol,
  StorageSharedKeyCredential,
  generateBlobSASQueryParameters
} from '@azure/storage-blob'

const SERVICE = 'github.actions.results.api.v1.ArtifactService'
export const METHODS = [
  'CreateArtifact',
  'FinalizeArtifact',
  'ListArtifacts',
  'GetSignedArtifactURL',
  'DeleteArtifact'
] as const
export type TwirpMethod = (typeof METHODS)[number]

/** Azurite's well-known development account (public, documented, not a secret). */
export const ACCOUNT = 'devstoreaccount1'
export const ACCOUNT_KEY =
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
const CONTAINER = 'actions-results'

export type Fault =
  | { method: TwirpMethod; kind: 'status'; status: number; code: string; msg: string }
  | { method: TwirpMethod; kind: 'reset' }
  | { method: TwirpMethod; kind: 'reset-after' }

export interface StoredArtifact {
  id: number
  name: string
  runBackendId: string
  jobBackendId: string
  blob: string
  finalized: boolean
  size: number
  hash: string | null
  createdAt: Date
  /**
   * When GitHub deletes it (the upload's retention, else the repository's 90 days): an expired
   * artifact is neither listed nor downloadable, as on GitHub.
   */
  expiresAt: Date
}

export interface RecordedRequest {
  method: string
  body: unknown
  status: number | 'reset'
}

export interface ResultsService {
  /** Environment the artifact client needs (token, results URL, no GHES server URL). */
  env: Record<string, string>
  runBackendId: string
  jobBackendId: string
  requests: RecordedRequest[]
  /** Requests the real service would have refused for their form (should stay empty). */
  violations: string[]
  /** Queued faults; each is used once, the first matching the RPC. `always` ones stay. */
  faults: Fault[]
  alwaysFail: Fault[]
  artifacts(): StoredArtifact[]
  /** Lets the named artifact's retention run out now (GitHub deletes it). */
  expire(name: string): void
  /** The raw bytes of an artifact's blob (the zip). */
  blob(name: string): Promise<Buffer>
  /**
   * Forgets every artifact, request, violation and fault, as a freshly started service would
   * have none (the next test of a file that shares one service starts from nothing).
   */
  reset(): void
  close(): Promise<void>
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port
      s.close(() => resolve(port))
    })
  })
}

export async function startAzurite(dir: string): Promise<{ child: ChildProcess; port: number }> {
  const bin = path.resolve('node_modules', '.bin', 'azurite-blob')
  for (let tries = 0; tries < 5; tries++) {
    const port = await freePort()
    const child = spawn(
      bin,
      [
        '--blobHost',
        '127.0.0.1',
        '--blobPort',
        String(port),
        '--location',
        dir,
        '--skipApiVersionCheck',
        '--disableTelemetry',
        '--silent'
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] }
    )
    const ok = await new Promise<boolean>((resolve) => {
      let out = ''
      const timer = setTimeout(() => resolve(false), 30_000)
      const onData = (c: Buffer): void => {
        out += c.toString()
        if (/successfully listen/i.test(out)) {
          clearTimeout(timer)
          resolve(true)
        }
      }
      child.stdout?.on('data', onData)
      child.stderr?.on('data', onData)
      child.once('exit', () => {
        clearTimeout(timer)
        resolve(false)
      })
    })
    if (ok) return { child, port }
    child.kill('SIGKILL')
  }
  throw new Error('azurite-blob did not start')
}

export function jwt(claims: Record<string, unknown>): string {
  const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url')
  // The client only decodes the token; the signature part is opaque to it.
  return `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}.${Buffer.from('stand-in').toString('base64url')}`
}

type FieldKind = 'string' | 'int64' | 'int32' | 'timestamp' | 'stringvalue' | 'int64value'
const REQUEST_FIELDS: Record<TwirpMethod, Record<string, FieldKind>> = {
  CreateArtifact: {
    workflow_run_backend_id: 'string',
    workflow_job_run_backend_id: 'string',
    name: 'string',
    expires_at: 'timestamp',
    version: 'int32',
    mime_type: 'stringvalue'
  },
  FinalizeArtifact: {
    workflow_run_backend_id: 'string',
    workflow_job_run_backend_id: 'string',
    name: 'string',
    size: 'int64',
    hash: 'stringvalue'
  },
  ListArtifacts: {
    workflow_run_backend_id: 'string',
    workflow_job_run_backend_id: 'string',
    name_filter: 'stringvalue',
    id_filter: 'int64value'
  },
  GetSignedArtifactURL: {
    workflow_run_backend_id: 'string',
    workflow_job_run_backend_id: 'string',
    name: 'string'
  },
  DeleteArtifact: {
    workflow_run_backend_id: 'string',
    workflow_job_run_backend_id: 'string',
    name: 'string'
  }
}

function fieldOk(kind: FieldKind, v: unknown): boolean {
  switch (kind) {
    case 'string':
    case 'stringvalue':
      return typeof v === 'string'
    case 'int32':
      return typeof v === 'number' && Number.isInteger(v)
    case 'int64':
    case 'int64value':
      return typeof v === 'string' && /^-?\d+$/.test(v)
    case 'timestamp':
      return typeof v === 'string' && !Number.isNaN(Date.parse(v))
  }
}

export async function startResultsService(): Promise<ResultsService> {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'airlock-results-'))
  const azurite = await startAzurite(dir)
  const blobEndpoint = `http://127.0.0.1:${azurite.port}/${ACCOUNT}`
  const credential = new StorageSharedKeyCredential(ACCOUNT, ACCOUNT_KEY)
  const blobService = new BlobServiceClient(blobEndpoint, credential)
  const container = blobService.getContainerClient(CONTAINER)
  await container.createIfNotExists()

  const runBackendId = randomUUID()
  const jobBackendId = randomUUID()
  const token = jwt({
    scp: `Actions.ExampleScope Actions.Results:${runBackendId}:${jobBackendId}`,
    exp: Math.floor(Date.now() / 1000) + 3600
  })
  const stored: StoredArtifact[] = []
  const FIRST_ID = 4100
  let nextId = FIRST_ID
  const requests: RecordedRequest[] = []
  const violations: string[] = []
  const faults: Fault[] = []
  const alwaysFail: Fault[] = []

  const sas = (blob: string, permissions: string): string =>
    `${blobEndpoint}/${CONTAINER}/${blob}?${generateBlobSASQueryParameters(
      {
        containerName: CONTAINER,
        blobName: blob,
        permissions: BlobSASPermissions.parse(permissions),
        expiresOn: new Date(Date.now() + 3600_000),
        protocol: SASProtocol.HttpsAndHttp
      },
      credential
    ).toString()}`

  const twirpError = (status: number, code: string, msg: string) => ({
    status,
    body: { code, msg }
  })

  async function handle(
    method: TwirpMethod,
    body: Record<string, unknown>
  ): Promise<{ status: number; body: unknown }> {
    if (body.workflow_run_backend_id !== runBackendId) {
      return twirpError(
        403,
        'permission_denied',
        'workflow run backend id does not match the token'
      )
    }
    if (body.workflow_job_run_backend_id !== jobBackendId) {
      return twirpError(403, 'permission_denied', 'job backend id does not match the token')
    }
    const inRun = stored.filter(
      (a) => a.runBackendId === runBackendId && a.expiresAt.getTime() > Date.now()
    )
    switch (method) {
      case 'CreateArtifact': {
        const name = String(body.name ?? '')
        if (name === '') return twirpError(400, 'invalid_argument', 'name is required')
        if (body.version !== 7) return twirpError(400, 'invalid_argument', 'unsupported version')
        if (inRun.some((a) => a.name === name && a.finalized)) {
          return twirpError(
            409,
            'already_exists',
            'an artifact with this name already exists on the workflow run'
          )
        }
        // An unfinalized artifact of the same name is replaced (a retried upload).
        const blob = `${runBackendId}/${jobBackendId}/${randomUUID()}.zip`
        for (let i = stored.length - 1; i >= 0; i--) {
          if (stored[i].name === name && !stored[i].finalized) stored.splice(i, 1)
        }
        stored.push({
          id: nextId++,
          name,
          runBackendId,
          jobBackendId,
          blob,
          finalized: false,
          size: 0,
          hash: null,
          createdAt: new Date(),
          expiresAt:
            typeof body.expires_at === 'string'
              ? new Date(body.expires_at)
              : new Date(Date.now() + 90 * 24 * 3600_000)
        })
        return { status: 200, body: { ok: true, signed_upload_url: sas(blob, 'cw') } }
      }
      case 'FinalizeArtifact': {
        const a = inRun.find((x) => x.name === body.name && !x.finalized)
        if (!a) return twirpError(404, 'not_found', 'no artifact in progress with this name')
        let content: Buffer
        try {
          content = await container.getBlobClient(a.blob).downloadToBuffer()
        } catch {
          return twirpError(400, 'failed_precondition', 'nothing was uploaded')
        }
        const size = Number(body.size ?? '0')
        if (size !== content.length) {
          return twirpError(400, 'invalid_argument', `size ${size} != uploaded ${content.length}`)
        }
        const hash = `sha256:${createHash('sha256').update(content).digest('hex')}`
        if (body.hash !== undefined && body.hash !== hash) {
          return twirpError(400, 'invalid_argument', `hash ${String(body.hash)} != ${hash}`)
        }
        a.finalized = true
        a.size = size
        a.hash = hash
        return { status: 200, body: { ok: true, artifact_id: String(a.id) } }
      }
      case 'ListArtifacts': {
        const list = inRun.filter(
          (a) =>
            a.finalized &&
            (body.name_filter === undefined || a.name === body.name_filter) &&
            (body.id_filter === undefined || String(a.id) === body.id_filter)
        )
        return {
          status: 200,
          body: {
            artifacts: list.map((a) => ({
              workflow_run_backend_id: a.runBackendId,
              workflow_job_run_backend_id: a.jobBackendId,
              database_id: String(a.id),
              name: a.name,
              size: String(a.size),
              created_at: a.createdAt.toISOString(),
              ...(a.hash ? { digest: a.hash } : {})
            }))
          }
        }
      }
      case 'GetSignedArtifactURL': {
        const a = inRun.find((x) => x.name === body.name && x.finalized)
        if (!a) return twirpError(404, 'not_found', 'artifact not found')
        return { status: 200, body: { signed_url: sas(a.blob, 'r') } }
      }
      case 'DeleteArtifact': {
        const i = stored.findIndex((x) => x.name === body.name && x.finalized)
        if (i < 0) return twirpError(404, 'not_found', 'artifact not found')
        const [a] = stored.splice(i, 1)
        return { status: 200, body: { ok: true, artifact_id: String(a.id) } }
      }
    }
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      void (async () => {
        const m = new RegExp(`^/twirp/${SERVICE.replace(/\./g, '\\.')}/([A-Za-z]+)$`).exec(
          req.url ?? ''
        )
        const method = m?.[1] as TwirpMethod | undefined
        const send = (status: number, body: unknown): void => {
          res.writeHead(status, { 'content-type': 'application/json' })
          res.end(JSON.stringify(body))
        }
        const reject = (status: number, code: string, msg: string): void => {
          violations.push(`${req.method} ${req.url}: ${msg}`)
          requests.push({ method: method ?? String(req.url), body: null, status })
          send(status, { code, msg })
        }
        if (req.method !== 'POST' || method === undefined || !METHODS.includes(method)) {
          return reject(404, 'bad_route', `no such route`)
        }
        if (req.headers.authorization !== `Bearer ${token}`) {
          return reject(401, 'unauthenticated', 'missing or wrong bearer token')
        }
        if (!/^application\/json/.test(req.headers['content-type'] ?? '')) {
          return reject(415, 'malformed', 'content-type must be application/json')
        }
        let body: Record<string, unknown>
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>
        } catch {
          return reject(400, 'malformed', 'body is not JSON')
        }
        const fields = REQUEST_FIELDS[method]
        for (const [k, v] of Object.entries(body)) {
          const kind = fields[k]
          if (kind === undefined) return reject(400, 'malformed', `unknown field ${k}`)
          if (!fieldOk(kind, v)) return reject(400, 'malformed', `field ${k} has the wrong type`)
        }
        const idx = faults.findIndex((f) => f.method === method)
        const fault =
          idx >= 0 ? faults.splice(idx, 1)[0] : alwaysFail.find((f) => f.method === method)
        if (fault?.kind === 'reset') {
          requests.push({ method, body, status: 'reset' })
          req.socket.destroy()
          return
        }
        if (fault?.kind === 'status') {
          requests.push({ method, body, status: fault.status })
          return send(fault.status, { code: fault.code, msg: fault.msg })
        }
        const answer = await handle(method, body)
        if (fault?.kind === 'reset-after') {
          requests.push({ method, body, status: 'reset' })
          req.socket.destroy()
          return
        }
        requests.push({ method, body, status: answer.status })
        send(answer.status, answer.body)
      })().catch((error: unknown) => {
        violations.push(`stand-in error: ${String(error)}`)
        res.writeHead(500)
        res.end('{"code":"internal","msg":"stand-in error"}')
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port

  return {
    env: {
      ACTIONS_RUNTIME_TOKEN: token,
      ACTIONS_RESULTS_URL: `http://127.0.0.1:${port}/`
    },
    runBackendId,
    jobBackendId,
    requests,
    violations,
    faults,
    alwaysFail,
    artifacts: () => stored.map((a) => ({ ...a })),
    expire: (name) => {
      for (const a of stored) if (a.name === name) a.expiresAt = new Date(Date.now() - 1000)
    },
    async blob(name) {
      const a = stored.find((x) => x.name === name && x.finalized)
      if (!a) throw new Error(`no finalized artifact ${name}`)
      return container.getBlobClient(a.blob).downloadToBuffer()
    },
    reset() {
      stored.length = 0
      nextId = FIRST_ID
      requests.length = 0
      violations.length = 0
      faults.length = 0
      alwaysFail.length = 0
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      azurite.child.kill('SIGTERM')
      await new Promise<void>((resolve) => {
        if (azurite.child.exitCode !== null) return resolve()
        const t = setTimeout(() => {
          azurite.child.kill('SIGKILL')
          resolve()
        }, 5000)
        azurite.child.once('exit', () => {
          clearTimeout(t)
          resolve()
        })
      })
      await fs.promises.rm(dir, { recursive: true, force: true })
    }
  }
}
