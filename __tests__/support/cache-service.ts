/**
 * A local stand-in of the Actions cache service (the Twirp CacheService of the results service
 * that `@actions/cache` talks to with ACTIONS_CACHE_SERVICE_V2), backed by a real Azurite blob
 * emulator. It checks the route, the bearer token and the field names, and keeps one flat key
 * space: it does NOT scope entries by ref, so a test shows what the action's own keys prevent.
 */
import { randomUUID } from 'node:crypto'
import * as fs from 'node:fs'
import * as http from 'node:http'
import type * as net from 'node:net'
import * as os from 'node:os'
import * as path from 'node:path'
import {
  BlobSASPermissions,
  BlobServiceClient,
  SASProtocol,
  StorageSharedKeyCredential,
  generateBlobSASQueryParameters
} from '@azure/storage-blob'
import { ACCOUNT, ACCOUNT_KEY, jwt, startAzurite } from './results-service.js'

const SERVICE = 'github.actions.results.api.v1.CacheService'
const FIELDS: Record<string, string[]> = {
  CreateCacheEntry: ['metadata', 'key', 'version'],
  FinalizeCacheEntryUpload: ['metadata', 'key', 'size_bytes', 'version'],
  GetCacheEntryDownloadURL: ['metadata', 'key', 'restore_keys', 'version']
}

interface Entry {
  key: string
  version: string
  blob: string
  finalized: boolean
  size: number
  at: number
}

export interface CacheService {
  env: Record<string, string>
  entries(): Entry[]
  /** Every lookup: the keys asked for and the key answered. */
  lookups: { key: string; restoreKeys: string[]; matched: string | null }[]
  violations: string[]
  close(): Promise<void>
}

export async function startCacheService(): Promise<CacheService> {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'airlock-cache-svc-'))
  const azurite = await startAzurite(dir)
  const endpoint = `http://127.0.0.1:${azurite.port}/${ACCOUNT}`
  const credential = new StorageSharedKeyCredential(ACCOUNT, ACCOUNT_KEY)
  const container = new BlobServiceClient(endpoint, credential).getContainerClient('actions-cache')
  await container.createIfNotExists()
  const token = jwt({ scp: 'Actions.Results:run:job', exp: Math.floor(Date.now() / 1000) + 3600 })
  const entries: Entry[] = []
  const lookups: CacheService['lookups'] = []
  const violations: string[] = []
  let tick = 0
  const sas = (blob: string, permissions: string): string =>
    `${endpoint}/actions-cache/${blob}?${generateBlobSASQueryParameters(
      {
        containerName: 'actions-cache',
        blobName: blob,
        permissions: BlobSASPermissions.parse(permissions),
        expiresOn: new Date(Date.now() + 3600_000),
        protocol: SASProtocol.HttpsAndHttp
      },
      credential
    ).toString()}`

  const handle = (method: string, b: Record<string, unknown>): unknown => {
    const key = String(b.key ?? '')
    const version = String(b.version ?? '')
    switch (method) {
      case 'CreateCacheEntry': {
        if (entries.some((e) => e.key === key && e.version === version))
          return { ok: false, message: 'cache entry with the same key and version already exists' }
        const blob = `${randomUUID()}.tgz`
        entries.push({ key, version, blob, finalized: false, size: 0, at: tick++ })
        return { ok: true, signed_upload_url: sas(blob, 'cw') }
      }
      case 'FinalizeCacheEntryUpload': {
        const e = entries.find((x) => x.key === key && x.version === version && !x.finalized)
        if (!e) return { ok: false, message: 'no entry being uploaded' }
        e.finalized = true
        e.size = Number(b.size_bytes)
        return { ok: true, entry_id: String(entries.indexOf(e) + 1) }
      }
      case 'GetCacheEntryDownloadURL': {
        const restoreKeys = Array.isArray(b.restore_keys) ? b.restore_keys.map(String) : []
        const done = entries.filter((e) => e.finalized && e.version === version)
        // As the service: the exact key, else the newest entry whose key starts with a restore key.
        let hit = done.find((e) => e.key === key)
        for (const prefix of restoreKeys) {
          if (hit) break
          hit = done.filter((e) => e.key.startsWith(prefix)).sort((x, y) => y.at - x.at)[0]
        }
        lookups.push({ key, restoreKeys, matched: hit?.key ?? null })
        if (!hit) return { ok: false }
        return { ok: true, signed_download_url: sas(hit.blob, 'r'), matched_key: hit.key }
      }
    }
    return undefined
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const m = new RegExp(`^/twirp/${SERVICE.replace(/\./g, '\\.')}/([A-Za-z]+)$`).exec(
        req.url ?? ''
      )
      const send = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(body))
      }
      const method = m?.[1]
      if (req.method !== 'POST' || method === undefined || FIELDS[method] === undefined) {
        violations.push(`${req.method} ${req.url}: no such route`)
        return send(404, { code: 'bad_route', msg: 'no such route' })
      }
      if (req.headers.authorization !== `Bearer ${token}`) {
        violations.push(`${method}: wrong bearer token`)
        return send(401, { code: 'unauthenticated', msg: 'bad token' })
      }
      let body: Record<string, unknown>
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>
      } catch {
        violations.push(`${method}: body is not JSON`)
        return send(400, { code: 'malformed', msg: 'not JSON' })
      }
      const unknown = Object.keys(body).filter((k) => !FIELDS[method].includes(k))
      if (unknown.length > 0) violations.push(`${method}: unknown fields ${unknown.join(', ')}`)
      send(200, handle(method, body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port
  return {
    env: {
      ACTIONS_RUNTIME_TOKEN: token,
      ACTIONS_RESULTS_URL: `http://127.0.0.1:${port}/`,
      ACTIONS_CACHE_SERVICE_V2: 'true'
    },
    entries: () => entries.map((e) => ({ ...e })),
    lookups,
    violations,
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      const exited = new Promise<void>((resolve) => {
        if (azurite.child.exitCode !== null) resolve()
        else azurite.child.once('exit', () => resolve())
      })
      azurite.child.kill('SIGTERM')
      await exited
      await fs.promises.rm(dir, { recursive: true, force: true })
    }
  }
}
