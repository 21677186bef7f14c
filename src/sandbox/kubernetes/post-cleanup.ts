// The action's post step on the Kubernetes backend: deletes what a cancelled or killed run left
// (its pods, services and network policies, by the run's label) with the pod's own service
// account. A small HTTP client on purpose: the post step's bundle carries no Kubernetes library.
import * as fs from 'node:fs'
import * as http from 'node:http'
import * as https from 'node:https'
import { LABELS } from '../../labels.js'
import { labelValue } from './names.js'

const SA = '/var/run/secrets/kubernetes.io/serviceaccount'

export interface KubeEndpoint {
  /** `https://host:port` (or `http://` for a local stand-in). */
  server: string
  token: string
  ca?: Buffer
}

/** The API server of the pod the step runs in (undefined: not in a cluster). */
export function inClusterEndpoint(
  env: NodeJS.ProcessEnv,
  read: (file: string) => Buffer = (f) => fs.readFileSync(f)
): KubeEndpoint | undefined {
  const host = env.KUBERNETES_SERVICE_HOST ?? ''
  if (host === '') return undefined
  const port = env.KUBERNETES_SERVICE_PORT ?? '443'
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    token: read(`${SA}/token`).toString('utf8').trim(),
    ca: read(`${SA}/ca.crt`)
  }
}

function request(
  ep: KubeEndpoint,
  method: string,
  path: string
): Promise<{ status: number; body: string }> {
  const url = new URL(path, ep.server)
  const lib = url.protocol === 'http:' ? http : https
  return new Promise((resolve, reject) => {
    const req = lib.request(
      url,
      {
        method,
        headers: { authorization: `Bearer ${ep.token}`, accept: 'application/json' },
        ...(ep.ca !== undefined ? { ca: ep.ca } : {}),
        timeout: 15_000
      },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => (body += c.length + body.length < 4_000_000 ? c : ''))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      }
    )
    req.on('timeout', () => req.destroy(new Error(`${method} ${url.pathname}: no answer`)))
    req.on('error', reject)
    req.end()
  })
}

const KINDS: { kind: 'pods' | 'services' | 'networkpolicies'; base: string }[] = [
  { kind: 'pods', base: '/api/v1' },
  { kind: 'services', base: '/api/v1' },
  { kind: 'networkpolicies', base: '/apis/networking.k8s.io/v1' }
]

/** Deletes the run's pods, services and policies; counts what it deleted (404: already gone). */
export async function deleteRunObjects(
  ep: KubeEndpoint,
  namespace: string,
  runId: string
): Promise<Record<'pods' | 'services' | 'networkpolicies', number>> {
  const selector = encodeURIComponent(`${LABELS.runId}=${labelValue(runId)}`)
  const out = { pods: 0, services: 0, networkpolicies: 0 }
  const ns = encodeURIComponent(namespace)
  for (const { kind, base } of KINDS) {
    const list = await request(
      ep,
      'GET',
      `${base}/namespaces/${ns}/${kind}?labelSelector=${selector}`
    )
    if (list.status !== 200) throw new Error(`listing ${kind}: HTTP ${list.status}`)
    const items =
      (JSON.parse(list.body) as { items?: { metadata?: { name?: string } }[] }).items ?? []
    for (const item of items) {
      const name = encodeURIComponent(item.metadata?.name ?? '')
      const grace = kind === 'pods' ? '?gracePeriodSeconds=0' : ''
      const del = await request(ep, 'DELETE', `${base}/namespaces/${ns}/${kind}/${name}${grace}`)
      if (del.status === 200 || del.status === 202) out[kind]++
      else if (del.status !== 404)
        throw new Error(`deleting ${kind} ${item.metadata?.name}: HTTP ${del.status}`)
    }
  }
  return out
}
