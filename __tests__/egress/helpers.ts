// Shared setup of the egress integration tests: a test CA and server certificate (openssl), the
// proxy bundle (esbuild), and a test network with two stub servers in containers the test owns.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as net from 'node:net'
import * as os from 'node:os'
import * as path from 'node:path'
import Docker from 'dockerode'
import * as esbuild from 'esbuild'
import { makeTestCerts } from '../../scripts/test-ca.mjs'

import { ROOT } from '../support/cli.js'

export { ROOT }
export const FIXTURES = path.join(ROOT, 'fixtures', 'egress')
export const TEST_LABEL = 'dev.airlock.test'

export function uniqueId(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`
}

export function imageId(ref: string): string {
  return execFileSync('docker', ['image', 'inspect', '-f', '{{.Id}}', ref]).toString().trim()
}

/**
 * A CA and a certificate for `api.test` (and `other.test`: the stub serves two names) signed by it,
 * in `dir` (ca.crt, server.key, server.crt).
 */
export function makeCerts(dir: string): void {
  makeTestCerts(dir, { names: ['api.test', 'other.test'], caName: 'airlock egress test CA' })
}

/** Bundles the proxy the way scripts/build.mjs does, into `dir`/proxy.cjs. */
export async function buildProxy(dir: string): Promise<string> {
  const outfile = path.join(dir, 'proxy.cjs')
  await esbuild.build({
    entryPoints: [path.join(ROOT, 'src', 'egress', 'proxy-main.ts')],
    bundle: true,
    platform: 'node',
    target: 'node18',
    format: 'cjs',
    outfile,
    logLevel: 'warning'
  })
  fs.chmodSync(outfile, 0o644)
  return outfile
}

export interface StubNet {
  id: string
  network: string
  gateway: string
  upstream: { name: string; ip: string }
  canary: { name: string; ip: string }
  seen(which: 'upstream' | 'canary'): Promise<StubSeen>
  remove(): Promise<void>
}

export interface StubSeen {
  auth: string[]
  udp: number
  dns: number
  requests: number
  paths: string[]
}

/**
 * A network of the test's own with the upstream stub and the canary (aliases canary.test,
 * internal.test). `internal: true` makes it an internal network (no route out of it), the upstream
 * side a proxy should have in tests.
 */
export async function startStubs(
  docker: Docker,
  certDir: string,
  /** `script`: the stub model's STUB_SCRIPT (fixtures/egress/stub-server.mjs), e.g. conversation. */
  opts: { internal?: boolean; script?: string } = {}
): Promise<StubNet> {
  const id = uniqueId('egtest')
  const labels = { [TEST_LABEL]: id }
  const network = `airlock-${id}`
  await docker.createNetwork({
    Name: network,
    Driver: 'bridge',
    Internal: opts.internal === true,
    Labels: labels
  })
  const nodeImage = imageId('airlock-local/node:18')
  const start = async (
    role: 'upstream' | 'canary',
    aliases: string[]
  ): Promise<{ name: string; ip: string }> => {
    const name = `${network}-${role}`
    const c = await docker.createContainer({
      name,
      Image: nodeImage,
      Cmd: ['node', '/stub/stub-server.mjs'],
      Env: [
        `STUB_NAME=${role.toUpperCase()}`,
        ...(opts.script !== undefined ? [`STUB_SCRIPT=${opts.script}`] : [])
      ],
      Labels: labels,
      HostConfig: {
        NetworkMode: network,
        Mounts: [
          {
            Type: 'bind',
            Source: path.join(FIXTURES, 'stub-server.mjs'),
            Target: '/stub/stub-server.mjs',
            ReadOnly: true
          },
          { Type: 'bind', Source: certDir, Target: '/certs', ReadOnly: true }
        ]
      },
      NetworkingConfig: { EndpointsConfig: { [network]: { Aliases: aliases } } }
    })
    await c.start()
    const info = await c.inspect()
    return { name, ip: info.NetworkSettings.Networks[network].IPAddress }
  }
  const upstream = await start('upstream', [])
  const canary = await start('canary', ['canary.test', 'internal.test'])
  const netInfo = await docker.getNetwork(network).inspect()
  const gateway = (netInfo.IPAM?.Config?.[0]?.Gateway as string | undefined) ?? ''
  const seen = async (which: 'upstream' | 'canary'): Promise<StubSeen> => {
    const ip = which === 'upstream' ? upstream.ip : canary.ip
    for (let i = 0; ; i++) {
      try {
        const res = await fetch(`http://${ip}:8080/seen`)
        return (await res.json()) as StubSeen
      } catch (error) {
        if (i > 40) throw error
        await new Promise((r) => setTimeout(r, 250))
      }
    }
  }
  await seen('upstream')
  await seen('canary')
  return {
    id,
    network,
    gateway,
    upstream,
    canary,
    seen,
    async remove() {
      const filters = JSON.stringify({ label: [`${TEST_LABEL}=${id}`] })
      for (const c of await docker.listContainers({ all: true, filters }))
        await docker
          .getContainer(c.Id)
          .remove({ force: true })
          .catch(() => undefined)
      await docker
        .getNetwork(network)
        .remove()
        .catch(() => undefined)
    }
  }
}

/** A TCP listener on all of the host's interfaces (the thing the sandbox must not reach). */
export async function hostListener(): Promise<{
  port: number
  hits: () => number
  close: () => void
}> {
  let hits = 0
  const server = net.createServer((s) => {
    hits++
    s.on('error', () => undefined)
    s.end('HOST-LISTENER\n')
  })
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve))
  return {
    port: (server.address() as net.AddressInfo).port,
    hits: () => hits,
    close: () => server.close()
  }
}

/** The host's own IPv4 addresses, loopback excluded. */
export function hostAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter(
      (a): a is os.NetworkInterfaceInfo => a !== undefined && a.family === 'IPv4' && !a.internal
    )
    .map((a) => a.address)
}

/** Everything a run left labelled with its id. */
export async function leftovers(docker: Docker, runId: string): Promise<string[]> {
  const filters = JSON.stringify({ label: [`dev.airlock.run-id=${runId}`] })
  const containers = await docker.listContainers({ all: true, filters })
  const networks = await docker.listNetworks({ filters })
  const volumes = await docker.listVolumes({ filters })
  return [
    ...containers.map((c) => `container ${c.Names.join(',')}`),
    ...networks.map((n) => `network ${n.Name}`),
    ...(volumes.Volumes ?? []).map((v) => `volume ${v.Name}`)
  ]
}

/** Every file under `dir`, with its content. */
export function readTree(dir: string): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = []
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.isFile()) out.push({ file: p, text: fs.readFileSync(p, 'latin1') })
    }
  }
  walk(dir)
  return out
}

/**
 * Runs `script` (a file of fixtures/egress) with node in a container of the test's own on
 * `network` (the agent's side of a proxy), with `env`; returns what it printed on stdout.
 */
export async function runClient(
  docker: Docker,
  opts: {
    network: string
    script: string
    env: string[]
    files?: { source: string; target: string }[]
    extraHosts?: string[]
    labels: Record<string, string>
    timeoutMs?: number
  }
): Promise<string> {
  const c = await docker.createContainer({
    name: uniqueId('airlock-egclient'),
    Image: imageId('airlock-local/node:18'),
    Cmd: ['node', `/client/${path.basename(opts.script)}`],
    Env: opts.env,
    Labels: opts.labels,
    User: '65534:65534',
    WorkingDir: '/client',
    HostConfig: {
      NetworkMode: opts.network,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      ...(opts.extraHosts ? { ExtraHosts: opts.extraHosts } : {}),
      Mounts: [
        {
          Type: 'bind',
          Source: path.join(FIXTURES, path.basename(opts.script)),
          Target: `/client/${path.basename(opts.script)}`,
          ReadOnly: true
        },
        ...(opts.files ?? []).map((f) => ({
          Type: 'bind' as const,
          Source: f.source,
          Target: f.target,
          ReadOnly: true
        }))
      ]
    }
  })
  try {
    await c.start()
    const timer = setTimeout(() => void c.kill().catch(() => undefined), opts.timeoutMs ?? 60_000)
    await c.wait()
    clearTimeout(timer)
    const logs = await c.logs({ stdout: true, stderr: true })
    // Demultiplex the log stream: 8-byte frame headers (stream, size) before each frame.
    const out: Buffer[] = []
    const err: Buffer[] = []
    for (let p = 0; p + 8 <= logs.length;) {
      const size = logs.readUInt32BE(p + 4)
      ;(logs[p] === 1 ? out : err).push(logs.subarray(p + 8, p + 8 + size))
      p += 8 + size
    }
    const stdout = Buffer.concat(out).toString('utf8')
    if (stdout.trim() === '')
      throw new Error(
        `client printed nothing: ${Buffer.concat(err).toString('utf8').slice(0, 3000)}`
      )
    return stdout
  } finally {
    await c.remove({ force: true }).catch(() => undefined)
  }
}

/** What the egress integration suites share: a temporary folder, the test CA, the proxy bundle
 * and the stub servers on a network of the test's own. */
export interface EgressWorld {
  readonly tmp: string
  readonly certs: string
  readonly proxyScript: string
  readonly stubs: StubNet
}

/**
 * Registers the suite's beforeAll (folder, certificates, proxy bundle, stubs) and afterAll (stubs
 * and folder removed); the fields can be read from the first test on.
 */
export function egressWorld(
  prefix: string,
  options: { internal?: boolean; timeoutMs?: number } = {}
): EgressWorld {
  let state: EgressWorld | undefined
  let tmp: string | undefined
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
    fs.chmodSync(tmp, 0o755)
    const certs = path.join(tmp, 'certs')
    makeCerts(certs)
    const proxyScript = await buildProxy(tmp)
    const stubs = await startStubs(
      new Docker(),
      certs,
      options.internal === true ? { internal: true } : {}
    )
    state = { tmp, certs, proxyScript, stubs }
  }, options.timeoutMs ?? 120_000)
  afterAll(async () => {
    await state?.stubs.remove()
    if (tmp !== undefined) fs.rmSync(tmp, { recursive: true, force: true })
  }, 60_000)
  const get = (): EgressWorld => {
    if (state === undefined) throw new Error('the egress world is set up in beforeAll')
    return state
  }
  return {
    get tmp() {
      return get().tmp
    },
    get certs() {
      return get().certs
    },
    get proxyScript() {
      return get().proxyScript
    },
    get stubs() {
      return get().stubs
    }
  }
}
