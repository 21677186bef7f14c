// The action's post step against the real engine: its small HTTP client (no dockerode) removes
// the run's labelled containers, networks and volumes and its temporary folders, and leaves
// everything else — unlabelled objects, another run's — alone. Also over tcp://, through a
// loopback relay to the engine's socket.
import { spawnSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as net from 'node:net'
import * as os from 'node:os'
import * as path from 'node:path'
import * as esbuild from 'esbuild'
import { LABELS } from '../../src/labels.js'
import { httpCleanupEngine, removeRunObjects } from '../../src/sandbox/cleanup.js'
import { engineEndpoint } from '../../src/sandbox/engine-http.js'
import { readHost } from '../../src/host.js'
import { STATE } from '../../src/state.js'
import { makeRunTemp } from '../../src/workspace/temp.js'
// @ts-expect-error -- a plain .mjs module of the build, without types
import { post } from '../../scripts/esbuild-options.mjs'
import { BUSYBOX, docker, leftovers, uniqueRunId } from '../support/run.js'
import { ROOT } from '../support/cli.js'
import { testHost } from '../support/host.js'

const made = { containers: [] as string[], networks: [] as string[], volumes: [] as string[] }

/** A running container on a network, the network and a volume, labelled for `runId` (`undefined`: no label). */
async function objects(runId: string | undefined, tag: string): Promise<void> {
  const labels: Record<string, string> =
    runId === undefined ? {} : { [LABELS.managed]: 'true', [LABELS.runId]: runId }
  const name = `airlock-postclean-${tag}-${process.pid}-${Date.now().toString(36)}`
  await docker.createVolume({ Name: `${name}-v`, Labels: labels })
  made.volumes.push(`${name}-v`)
  const network = await docker.createNetwork({ Name: `${name}-n`, Labels: labels })
  made.networks.push(network.id)
  const c = await docker.createContainer({
    Image: BUSYBOX,
    Cmd: ['sleep', '600'],
    Labels: labels,
    HostConfig: { NetworkMode: `${name}-n` }
  })
  made.containers.push(c.id)
  await c.start()
}

async function exists(kind: 'container' | 'network' | 'volume', id: string): Promise<boolean> {
  const o =
    kind === 'container'
      ? docker.getContainer(id)
      : kind === 'network'
        ? docker.getNetwork(id)
        : docker.getVolume(id)
  return o.inspect().then(
    () => true,
    () => false
  )
}

afterAll(async () => {
  for (const id of made.containers)
    await docker
      .getContainer(id)
      .remove({ force: true, v: true })
      .catch(() => undefined)
  for (const id of made.networks)
    await docker
      .getNetwork(id)
      .remove()
      .catch(() => undefined)
  for (const id of made.volumes)
    await docker
      .getVolume(id)
      .remove({ force: true })
      .catch(() => undefined)
})

test('removes the run’s labelled objects over the socket, and nothing else', async () => {
  const runId = uniqueRunId('postclean')
  await objects(runId, 'mine')
  await objects(`${runId}-other`, 'other')
  await objects(undefined, 'plain')
  expect(await leftovers(runId)).toBe(3)

  const removed = await removeRunObjects(
    httpCleanupEngine(engineEndpoint(readHost(process.env).docker), testHost.engineTimeoutMs),
    runId,
    testHost.engineTimeoutMs
  )
  expect(removed).toEqual({ containers: 1, networks: 1, volumes: 1 })
  expect(await leftovers(runId)).toBe(0)
  // Another run's objects and unlabelled ones are still there.
  expect(await leftovers(`${runId}-other`)).toBe(3)
  const [mine, other, plain] = made.containers.slice(-3)
  expect(await exists('container', mine as string)).toBe(false)
  expect(await exists('container', other as string)).toBe(true)
  expect(await exists('container', plain as string)).toBe(true)
  expect(await exists('network', made.networks.at(-1) as string)).toBe(true)
  expect(await exists('volume', made.volumes.at(-1) as string)).toBe(true)
  // Nothing left: a second cleanup removes nothing and does not fail.
  expect(
    await removeRunObjects(
      httpCleanupEngine(engineEndpoint(readHost(process.env).docker), testHost.engineTimeoutMs),
      runId,
      testHost.engineTimeoutMs
    )
  ).toEqual({
    containers: 0,
    networks: 0,
    volumes: 0
  })
})

test('reaches the engine at a tcp:// DOCKER_HOST', async () => {
  const runId = uniqueRunId('postclean-tcp')
  await objects(runId, 'tcp')
  const socketPath = (engineEndpoint(readHost({}).docker) as { socketPath: string }).socketPath
  const relay = net.createServer((client) => {
    const engine = net.connect(socketPath)
    client.pipe(engine).pipe(client)
    client.on('error', () => engine.destroy())
    engine.on('error', () => client.destroy())
  })
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
  try {
    const port = (relay.address() as net.AddressInfo).port
    const endpoint = engineEndpoint(readHost({ DOCKER_HOST: `tcp://127.0.0.1:${port}` }).docker)
    expect(endpoint).toEqual({ protocol: 'http:', host: '127.0.0.1', port })
    expect(
      await removeRunObjects(
        httpCleanupEngine(endpoint, testHost.engineTimeoutMs),
        runId,
        testHost.engineTimeoutMs
      )
    ).toEqual({
      containers: 1,
      networks: 1,
      volumes: 1
    })
    expect(await leftovers(runId)).toBe(0)
  } finally {
    relay.close()
  }
})

test('the bundled post step removes the run’s objects and temporary folders', async () => {
  const runId = uniqueRunId('postclean-step')
  await objects(runId, 'step')
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-postroot-'))
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-postdist-'))
  try {
    const dir = await makeRunTemp(tmp, runId)
    fs.mkdirSync(path.join(dir, 'workspace', 'locked'), { recursive: true })
    fs.chmodSync(path.join(dir, 'workspace', 'locked'), 0o500)
    const other = await makeRunTemp(tmp, `${runId}-other`)
    await esbuild.build({
      ...post,
      entryPoints: { post: path.join(ROOT, 'src/post.ts') },
      outdir: out
    })
    const r = spawnSync(process.execPath, [path.join(out, 'post.js')], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
        [`STATE_${STATE.runId}`]: runId,
        [`STATE_${STATE.tempRoot}`]: tmp
      }
    })
    expect(r.stderr.toString()).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout.toString()).toContain(
      'cleanup: 1 container(s), 1 network(s), 1 volume(s), 1 temp dir(s)'
    )
    expect(await leftovers(runId)).toBe(0)
    expect(fs.existsSync(dir)).toBe(false)
    expect(fs.existsSync(other)).toBe(true)
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
    fs.rmSync(out, { recursive: true, force: true })
  }
})

test('an unreachable engine is a warning of the post step, never a failure', async () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-postdist-'))
  try {
    await esbuild.build({
      ...post,
      entryPoints: { post: path.join(ROOT, 'src/post.ts') },
      outdir: out
    })
    const r = spawnSync(process.execPath, [path.join(out, 'post.js')], {
      env: {
        PATH: process.env.PATH,
        DOCKER_HOST: `unix://${path.join(out, 'no-engine.sock')}`,
        AIRLOCK_ENGINE_TIMEOUT_MS: '2000',
        [`STATE_${STATE.runId}`]: 'nothing-here'
      }
    })
    expect(r.status).toBe(0)
    expect(r.stdout.toString()).toMatch(/^::warning::cleanup: .*list containers/m)
  } finally {
    fs.rmSync(out, { recursive: true, force: true })
  }
})
