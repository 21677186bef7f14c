import { TOKEN, makeWorld } from '../../__fixtures__/action-harness.js'
import type { World } from '../../__fixtures__/action-harness.js'

/** The stand-in's checks can fail: requests GitHub would reject are answered and recorded so. */
let world: World
beforeEach(async () => {
  world = await makeWorld()
})
afterEach(async () => {
  await world.close()
})

async function call(method: string, path: string, body?: unknown): Promise<number> {
  const res = await fetch(`${world.api.url}${path}`, {
    method,
    headers: { authorization: `token ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  return res.status
}

describe('the GitHub stand-in', () => {
  test('accepts a valid status', async () => {
    expect(
      await call('POST', `/repos/octo-org/hello/statuses/${world.base}`, {
        state: 'pending',
        context: 'airlock/approval'
      })
    ).toBe(201)
    expect(world.api.violations).toEqual([])
  })

  test('an invalid enum value is rejected against the OpenAPI schema', async () => {
    expect(
      await call('POST', `/repos/octo-org/hello/statuses/${world.base}`, { state: 'green' })
    ).toBe(422)
    expect(world.api.violations).toEqual([
      expect.stringMatching(
        /^POST \/repos\/\{owner\}\/\{repo\}\/statuses\/\{sha\}: .*allowed values/
      )
    ])
  })

  test('a missing required field is rejected', async () => {
    expect(
      await call('POST', `/repos/octo-org/hello/pulls/7/reviews/1/events`, { body: 'x' })
    ).toBe(422)
    expect(world.api.violations[0]).toMatch(/must have required property 'event'/)
  })

  test('a field GitHub does not know is recorded', async () => {
    await call('POST', `/repos/octo-org/hello/statuses/${world.base}`, {
      state: 'pending',
      colour: 'amber'
    })
    expect(world.api.violations).toEqual([expect.stringContaining('unknown field "colour"')])
  })

  test('an unknown route is a 404 and a violation', async () => {
    expect(await call('POST', '/repos/octo-org/hello/approve-everything', {})).toBe(404)
    expect(world.api.violations).toEqual([
      'unknown route: POST /repos/octo-org/hello/approve-everything'
    ])
  })

  test('a bad token is a 401', async () => {
    const res = await fetch(`${world.api.url}/repos/octo-org/hello/pulls/7`, {
      headers: { authorization: 'token nope' }
    })
    expect(res.status).toBe(401)
  })
})
