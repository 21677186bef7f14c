import { Buffer } from 'node:buffer'
import { createClient } from '../../src/github/client/client.js'
import { contentsReader } from '../../src/github/client/contents.js'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { ConfigurationError, InfrastructureError } from '../../src/errors.js'
import { MemoryLogger } from '../../src/log.js'
import { loadPolicy } from '../../src/policy/load.js'

/** The contents API on the real Octokit client, answered by a plain fake fetch. */
function reader(status: number, body: unknown, seen: string[] = []) {
  const fetch = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    seen.push(`${init?.method ?? 'GET'} ${String(url)} ${JSON.stringify(init?.headers)}`)
    return new Response(JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json' }
    })
  }
  const client = createClient({
    token: 'tok',
    baseUrl: 'http://api.test/',
    log: new MemoryLogger(),
    retries: 0,
    readOnly: true,
    fetch: fetch as typeof globalThis.fetch
  })
  return contentsReader(client, { repository: 'o/r', refInput: 'policy-base' })
}

describe('contentsReader', () => {
  test('reads a file: GET contents at the ref, with the token', async () => {
    const seen: string[] = []
    const f = await reader(
      200,
      {
        type: 'file',
        sha: 'a1',
        encoding: 'base64',
        content: Buffer.from('memory: 1g').toString('base64')
      },
      seen
    )('.github/airlock.yml', 'abc')
    expect(f).toEqual({ sha: 'a1', content: Buffer.from('memory: 1g') })
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatch(
      /^GET http:\/\/api\.test\/repos\/o\/r\/contents\/\.github(%2F|\/)airlock\.yml\?ref=abc /
    )
    expect(seen[0]).toMatch(/token tok|Bearer tok/i)
  })

  test.each<[string, number, unknown, RegExp | null]>([
    ['missing file', 404, { message: 'Not Found' }, null],
    [
      'missing ref',
      404,
      { message: 'No commit found for the ref abc' },
      /policy-base: abc: No commit found/
    ],
    ['server error', 502, { message: 'Bad Gateway' }, /502.*Bad Gateway/],
    ['a directory', 200, [{ type: 'file' }], /is not a regular file/],
    ['a symlink', 200, { type: 'symlink', sha: 'x', target: '../x' }, /is not a regular file/]
  ])('%s', async (_name, status, body, error) => {
    const call = reader(status, body)('.github/airlock.yml', 'abc')
    if (error === null) await expect(call).resolves.toBeNull()
    else await expect(call).rejects.toThrow(error)
  })

  test.each<[number, unknown, new (...args: never[]) => Error]>([
    [502, { message: 'Bad Gateway' }, InfrastructureError],
    [403, { message: 'Resource not accessible by integration' }, InfrastructureError],
    [404, { message: 'No commit found for the ref abc' }, ConfigurationError],
    [200, { type: 'symlink', sha: 'x', target: '../x' }, ConfigurationError]
  ])(
    'the policy loader fails closed on HTTP %d from the base commit',
    async (status, body, kind) => {
      const notAClone = fs.mkdtempSync(path.join(os.tmpdir(), 'policy-api-'))
      try {
        const seen: string[] = []
        await expect(
          loadPolicy({ repoPath: notAClone, base: 'e'.repeat(40), api: reader(status, body, seen) })
        ).rejects.toBeInstanceOf(kind)
        expect(seen[0]).toContain(`?ref=${'e'.repeat(40)} `)
      } finally {
        fs.rmSync(notAClone, { recursive: true, force: true })
      }
    }
  )
})
