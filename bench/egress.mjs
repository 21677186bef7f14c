// Egress proxy overhead: 200 sequential requests from a container through the proxy (the agent's
// path in allowlist mode) vs the same requests from a container straight to the same local
// upstream, each on a new connection. Prints a table of medians and their ratio.
//   node bench/egress.mjs [N]      (needs Docker and the local node image: scripts/prepare-images.sh)
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import Docker from 'dockerode'
import * as esbuild from 'esbuild'
import { makeTestCerts } from '../scripts/test-ca.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const N = Number(process.argv[2] ?? 200)
const id = `bench-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`
const label = { 'dev.airlock.run-id': id, 'dev.airlock.managed': 'true' }
const docker = new Docker()
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-bench-'))
fs.chmodSync(tmp, 0o755)
const say = (m) => process.stderr.write(`[bench] ${m}\n`)

const nodeImage = execFileSync('docker', [
  'image',
  'inspect',
  '-f',
  '{{.Id}}',
  'airlock-local/node:18'
])
  .toString()
  .trim()
say('test CA and certificate, proxy bundle...')
const certs = path.join(tmp, 'certs')
makeTestCerts(certs, { names: ['api.test'], caName: 'bench CA', days: 1 })
const build = { bundle: true, platform: 'node', logLevel: 'warning' }
await esbuild.build({
  ...build,
  entryPoints: [path.join(root, 'src/egress/proxy-main.ts')],
  target: 'node18',
  format: 'cjs',
  outfile: path.join(tmp, 'proxy.cjs')
})
fs.chmodSync(path.join(tmp, 'proxy.cjs'), 0o644)
const sidecarFile = path.join(root, 'node_modules', '.cache', 'airlock-bench', 'sidecar.mjs')
await esbuild.build({
  ...build,
  entryPoints: [path.join(root, 'src/egress/sidecar.ts')],
  format: 'esm',
  outfile: sidecarFile,
  external: ['dockerode']
})
const { startEgress } = await import(pathToFileURL(sidecarFile).href)

const network = `airlock-${id}`
let session
try {
  await docker.createNetwork({ Name: network, Labels: label })
  const stub = await docker.createContainer({
    name: `${network}-upstream`,
    Image: nodeImage,
    Cmd: ['node', '/stub/stub-server.mjs'],
    Labels: label,
    HostConfig: {
      NetworkMode: network,
      Mounts: [
        {
          Type: 'bind',
          Source: path.join(root, 'fixtures/egress/stub-server.mjs'),
          Target: '/stub/stub-server.mjs',
          ReadOnly: true
        },
        { Type: 'bind', Source: certs, Target: '/certs', ReadOnly: true }
      ]
    }
  })
  await stub.start()
  const stubIp = (await stub.inspect()).NetworkSettings.Networks[network].IPAddress
  say(`upstream stub at ${stubIp}; starting the egress proxy...`)
  session = await startEgress(docker, {
    runId: id,
    labels: label,
    proxyImage: nodeImage,
    proxyScript: path.join(tmp, 'proxy.cjs'),
    allow: [{ host: 'api.test', wildcard: false, ports: [8443, 8080] }],
    hostMap: [{ host: 'api.test', address: stubIp }],
    credentials: [
      {
        name: 'BENCH',
        upstream: 'https://api.test:8443',
        secretEnv: 'X',
        header: { kind: 'bearer' },
        baseUrlEnv: 'BENCH_BASE_URL',
        keyEnv: 'BENCH_API_KEY',
        secret: 'bench-key'
      }
    ],
    extraCa: fs.readFileSync(path.join(certs, 'ca.crt'), 'utf8'),
    upstreamNetwork: network
  })
  await new Promise((r) => setTimeout(r, 500))
  const client = (mode, viaProxy) => {
    const args = [
      'run',
      '--rm',
      '--label',
      `dev.airlock.run-id=${id}`,
      '--network',
      viaProxy ? session.network : network,
      '--user',
      '65534:65534'
    ]
    if (viaProxy) for (const e of session.env) args.push('-e', e)
    args.push(
      '-v',
      `${path.join(root, 'bench/egress-client.mjs')}:/bench/egress-client.mjs:ro`,
      '-v',
      `${path.join(certs, 'ca.crt')}:/bench/ca.crt:ro`
    )
    args.push(nodeImage, 'node', '/bench/egress-client.mjs', mode, String(N), stubIp)
    return JSON.parse(execFileSync('docker', args).toString().trim().split('\n').pop())
  }
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b)
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
  }
  const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]
  const rows = []
  for (const [mode, what] of [
    ['http', 'plain HTTP GET (absolute-form through the proxy)'],
    ['https', 'HTTPS GET (CONNECT tunnel + TLS through the proxy)'],
    ['credential', 'API POST (credential route: plain HTTP in, TLS out, key added, recorded)']
  ]) {
    say(`${mode}: ${N} requests direct, then through the proxy...`)
    const direct = client(mode, false)
    const proxied = client(mode, true)
    rows.push({
      what,
      direct: median(direct.times),
      proxy: median(proxied.times),
      directP90: p90(direct.times),
      proxyP90: p90(proxied.times)
    })
  }
  const capture = await session.stop()
  session = undefined
  const denied = capture.events.filter((e) => !e.allowed).length
  const lines = [
    `Egress proxy overhead, ${N} sequential requests each (new connection per request), ${new Date().toISOString().slice(0, 10)}, ${os.cpus()[0]?.model ?? 'cpu'} x${os.cpus().length}`,
    '',
    '| request | direct median ms | proxy median ms | ratio | direct p90 ms | proxy p90 ms |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.what} | ${r.direct.toFixed(2)} | ${r.proxy.toFixed(2)} | ${(r.proxy / r.direct).toFixed(2)}x | ${r.directP90.toFixed(2)} | ${r.proxyP90.toFixed(2)} |`
    ),
    '',
    `proxy log: ${capture.events.length} events, ${denied} denied, ${capture.transcript.length} transcript records`
  ]
  process.stdout.write(lines.join('\n') + '\n')
} finally {
  if (session) await session.stop().catch(() => undefined)
  const filters = JSON.stringify({ label: [`dev.airlock.run-id=${id}`] })
  for (const c of await docker.listContainers({ all: true, filters }))
    await docker
      .getContainer(c.Id)
      .remove({ force: true })
      .catch(() => undefined)
  for (const n of await docker.listNetworks({ filters }))
    await docker
      .getNetwork(n.Id)
      .remove()
      .catch(() => undefined)
  fs.rmSync(tmp, { recursive: true, force: true })
}
