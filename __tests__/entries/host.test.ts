import * as os from 'node:os'
import * as path from 'node:path'
import { readHost } from '../../src/host.js'

describe('readHost: the host facts, read once at the edge', () => {
  it('takes the defaults when nothing is set', () => {
    const h = readHost({})
    expect(h.docker).toEqual({})
    expect(h.buildkit).toBeUndefined()
    expect(h.engineTimeoutMs).toBe(60_000)
    expect(h.lockDir).toBe(path.join(os.tmpdir(), 'airlock-locks'))
    expect(h.cacheRoot).toBe(path.join(os.homedir(), '.cache', 'airlock'))
    expect(h.path).toBeUndefined()
    expect(h.toolEnv).toEqual({})
  })

  it('reads each variable it names', () => {
    const env = {
      DOCKER_HOST: 'tcp://engine:2376',
      DOCKER_TLS_VERIFY: '1',
      DOCKER_CERT_PATH: '/certs',
      DOCKER_BUILDKIT: '0',
      AIRLOCK_ENGINE_TIMEOUT_MS: '1500',
      AIRLOCK_LOCK_DIR: '/locks',
      XDG_CACHE_HOME: '/xdg',
      PATH: '/bin'
    }
    const h = readHost(env)
    expect(h.docker).toEqual({ host: 'tcp://engine:2376', tlsVerify: '1', certPath: '/certs' })
    expect(h.buildkit).toBe('0')
    expect(h.engineTimeoutMs).toBe(1500)
    expect(h.lockDir).toBe('/locks')
    expect(h.cacheRoot).toBe('/xdg/airlock')
    expect(h.path).toBe('/bin')
    expect(h.toolEnv).toEqual(env)
  })

  it.each(['0', '-5', 'soon', String(2 ** 31)])(
    'ignores an engine timeout of %s (the default stands)',
    (v) => {
      expect(readHost({ AIRLOCK_ENGINE_TIMEOUT_MS: v }).engineTimeoutMs).toBe(60_000)
    }
  )

  it('ignores a relative XDG_CACHE_HOME, as the XDG spec says', () => {
    expect(readHost({ XDG_CACHE_HOME: 'rel' }).cacheRoot).toBe(
      path.join(os.homedir(), '.cache', 'airlock')
    )
  })

  it('drops unset entries from the tools environment', () => {
    expect(readHost({ A: 'x', B: undefined }).toolEnv).toEqual({ A: 'x' })
  })
})
