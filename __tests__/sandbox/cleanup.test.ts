import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { LABELS } from '../../src/labels.js'
import { RUN_ID_LABEL, removeRunObjects, runFilters } from '../../src/sandbox/cleanup.js'
import type { CleanupEngine, ObjectKind } from '../../src/sandbox/cleanup.js'
import { EngineFault } from '../../src/sandbox/engine-faults.js'
import { EngineHttpError, engineEndpoint } from '../../src/sandbox/engine-http.js'
import { readHost } from '../../src/host.js'
import { InfrastructureError } from '../../src/errors.js'
import { testHost } from '../support/host.js'

test('cleanup filters on the label the plan puts on everything a run creates', () => {
  expect(RUN_ID_LABEL).toBe(LABELS.runId)
  expect(JSON.parse(runFilters('r1'))).toEqual({ label: [`${LABELS.runId}=r1`] })
})

/** A fake engine: objects by kind; `fail` answers a removal with an error. */
function fakeEngine(
  objects: Record<ObjectKind, string[]>,
  fail: Partial<Record<string, Error>> = {}
): CleanupEngine & { removed: string[] } {
  const removed: string[] = []
  return {
    removed,
    list: (kind) => Promise.resolve(objects[kind].map((id) => ({ id, name: id }))),
    remove: (kind, id) => {
      const e = fail[id]
      if (e) return Promise.reject(e)
      removed.push(`${kind}:${id}`)
      return Promise.resolve()
    }
  }
}

test('removes containers, then networks, then volumes, counting what it removed', async () => {
  const engine = fakeEngine({ container: ['c1', 'c2'], network: ['n1'], volume: ['v1'] })
  expect(await removeRunObjects(engine, 'r', testHost.engineTimeoutMs)).toEqual({
    containers: 2,
    networks: 1,
    volumes: 1
  })
  expect(engine.removed).toEqual(['container:c1', 'container:c2', 'network:n1', 'volume:v1'])
})

test('an object already gone is not counted; another failure is thrown after the rest', async () => {
  const engine = fakeEngine(
    { container: ['gone', 'stuck', 'c3'], network: ['n1'], volume: [] },
    {
      gone: new EngineHttpError(404, 'no such container'),
      stuck: new EngineHttpError(409, 'removal already in progress')
    }
  )
  const error = await removeRunObjects(engine, 'r', testHost.engineTimeoutMs).catch(
    (e: unknown) => e
  )
  expect(error).toBeInstanceOf(EngineFault)
  expect((error as Error).message).toMatch(/remove container stuck: .*in progress/)
  expect(engine.removed).toEqual(['container:c3', 'network:n1'])
})

describe('engineEndpoint (as dockerode finds the engine)', () => {
  test.each<[NodeJS.ProcessEnv, unknown]>([
    [
      { DOCKER_HOST: 'unix:///run/user/1000/docker.sock' },
      { socketPath: '/run/user/1000/docker.sock' }
    ],
    [{ DOCKER_HOST: 'npipe:////./pipe/docker_engine' }, { socketPath: '//./pipe/docker_engine' }],
    [{ DOCKER_HOST: 'tcp://127.0.0.1:2375' }, { protocol: 'http:', host: '127.0.0.1', port: 2375 }],
    [{ DOCKER_HOST: 'localhost:1234' }, { protocol: 'http:', host: 'localhost', port: 1234 }],
    [{ DOCKER_HOST: 'tcp://[::1]:2375' }, { protocol: 'http:', host: '::1', port: 2375 }],
    [{ DOCKER_HOST: 'tcp://engine:2376' }, { protocol: 'https:', host: 'engine', port: 2376 }],
    [
      { DOCKER_HOST: 'tcp://engine:4000', DOCKER_TLS_VERIFY: '1' },
      { protocol: 'https:', host: 'engine', port: 4000 }
    ]
  ])('%p → %p', (env, expected) => {
    expect(engineEndpoint(readHost(env).docker)).toEqual(expected)
  })

  test('no DOCKER_HOST: the default socket', () => {
    expect(engineEndpoint(readHost({}).docker)).toHaveProperty('socketPath')
  })

  test('DOCKER_CERT_PATH gives the client its certificates', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-certs-'))
    try {
      for (const f of ['ca.pem', 'cert.pem', 'key.pem']) fs.writeFileSync(path.join(dir, f), f)
      const e = engineEndpoint(
        readHost({ DOCKER_HOST: 'tcp://engine:2376', DOCKER_CERT_PATH: dir }).docker
      )
      expect(e).toMatchObject({ protocol: 'https:', tls: { ca: Buffer.from('ca.pem') } })
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  test('an ssh:// engine is refused with what to do instead', () => {
    expect(() => engineEndpoint(readHost({ DOCKER_HOST: 'ssh://me@engine' }).docker)).toThrow(
      InfrastructureError
    )
    expect(() => engineEndpoint(readHost({ DOCKER_HOST: 'ssh://me@engine' }).docker)).toThrow(
      /airlock cleanup --run-id/
    )
  })
})
