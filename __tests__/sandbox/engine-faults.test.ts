import { InfrastructureError } from '../../src/errors.js'
import {
  EngineFault,
  engineStoppedIt,
  isEngineError,
  isEngineGone,
  retryWhileAway,
  withDeadline
} from '../../src/sandbox/engine-faults.js'

describe('engine faults', () => {
  it.each([
    [
      Object.assign(new Error('connect ECONNREFUSED /var/run/docker.sock'), {
        code: 'ECONNREFUSED'
      }),
      true
    ],
    [Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), true],
    [new Error('socket hang up'), true],
    [Object.assign(new Error('(HTTP code 500) server error'), { statusCode: 500 }), true],
    [Object.assign(new Error('(HTTP code 404) no such container'), { statusCode: 404 }), false],
    [Object.assign(new Error('(HTTP code 400) bad parameter'), { statusCode: 400 }), false],
    [new Error('invalid reference format'), false],
    ['a string', false]
  ])('%p is an engine error: %p', (error, expected) => {
    expect(isEngineError(error)).toBe(expected)
  })

  it('a request past its deadline is an EngineFault (an infrastructure error)', async () => {
    const never = new Promise<never>(() => undefined)
    const e = await withDeadline(never, 20, 'container start').catch((x: unknown) => x)
    expect(e).toBeInstanceOf(EngineFault)
    expect(e).toBeInstanceOf(InfrastructureError)
    expect((e as Error).message).toMatch(/container start: no answer within 20 ms/)
  })

  it('a dropped connection becomes an EngineFault naming the operation; a refusal stays itself', async () => {
    const dropped = withDeadline(
      Promise.reject(new Error('socket hang up')),
      1000,
      'container wait'
    )
    await expect(dropped).rejects.toThrow(/during container wait: socket hang up/)
    const refused = Object.assign(new Error('no such image'), { statusCode: 404 })
    await expect(withDeadline(Promise.reject(refused), 1000, 'x')).rejects.toBe(refused)
  })

  it('retries while the engine is away, not after a refusal', async () => {
    let calls = 0
    const r = await retryWhileAway(
      async () => {
        calls++
        if (calls < 3)
          throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
        return 'ok'
      },
      { firstDelayMs: 1 }
    )
    expect([r, calls]).toEqual(['ok', 3])
    calls = 0
    await expect(
      retryWhileAway(async () => {
        calls++
        throw Object.assign(new Error('conflict'), { statusCode: 409 })
      })
    ).rejects.toThrow('conflict')
    expect(calls).toBe(1)
  })

  it('stops retrying when the retry window has passed', async () => {
    let calls = 0
    const gone = Object.assign(new Error('connect ENOENT /var/run/docker.sock'), { code: 'ENOENT' })
    await expect(
      retryWhileAway(
        async () => {
          calls++
          throw gone
        },
        { until: Date.now() + 60, firstDelayMs: 10 }
      )
    ).rejects.toBe(gone)
    expect(calls).toBeGreaterThan(1)
    expect(calls).toBeLessThan(10)
  })

  it.each([
    [
      'socket missing',
      Object.assign(new Error('connect ENOENT /x.sock'), { code: 'ENOENT' }),
      true
    ],
    ['refused', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), true],
    ['reset', new Error('socket hang up'), true],
    ['wrapped', new EngineFault('container inspect', new Error('socket hang up')), true],
    [
      'no answer in time',
      new EngineFault('container inspect', new Error('no answer within 5 ms')),
      false
    ],
    ['a 500', Object.assign(new Error('server error'), { statusCode: 500 }), false],
    ['a 404', Object.assign(new Error('no such container'), { statusCode: 404 }), false]
  ])('gone or only slow: %s', (_t, error, expected) => {
    expect(isEngineGone(error)).toBe(expected)
  })

  it.each([
    ['exit 0 is the agent’s', 0, [{ action: 'start' }], 0, false],
    ['143 after the run’s own kill', 143, [{ action: 'start' }, { action: 'kill' }], 1, false],
    ['143 with no kill: the agent’s own', 143, [{ action: 'start' }], 0, false],
    [
      '143 with a kill the run did not send',
      143,
      [{ action: 'start' }, { action: 'kill' }],
      0,
      true
    ],
    ['143 and the start is gone: the daemon restarted', 143, [], 0, true],
    ['137 and the start is gone', 137, [{ action: 'die' }], 0, true]
  ])('%s', (_t, code, events, sent, expected) => {
    expect(engineStoppedIt(code, events, sent)).toBe(expected)
  })
})
