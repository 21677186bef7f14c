// How the action fails, driven through the real @actions/core the way the runner drives it
// (INPUT_* variables, GITHUB_STEP_SUMMARY): the user's mistake, the environment's failure and a
// bug are three different reports, and whatever is thrown fails the step.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { jest } from '@jest/globals'
import { ConfigurationError, InfrastructureError } from '../../src/errors.js'
import { GitHubRequestError } from '../../src/github/client/client.js'
import { ApplyRefused } from '../../src/github/apply/patch-tree.js'

// The command mode stands in for "some work the step does": each test says what it throws.
const commandMode = jest.fn<() => Promise<void>>()
jest.unstable_mockModule('../../src/github/modes/command.js', () => ({ commandMode }))
const { run } = await import('../../src/main.js')
const { reportFailure } = await import('../../src/github/client/failure.js')
const { readRunner } = await import('../../src/runner.js')

let dir: string
let stdout: string[]
const saved = { ...process.env }
// One summary file for the file's tests: core.summary keeps the path it first read, as a step does.
const summaryDir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-summary-'))
const summary = path.join(summaryDir, 'summary.md')

afterAll(() => fs.rmSync(summaryDir, { recursive: true, force: true }))

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-failure-'))
  fs.writeFileSync(summary, '')
  for (const k of Object.keys(process.env)) if (k.startsWith('INPUT_')) delete process.env[k]
  process.env.GITHUB_STEP_SUMMARY = summary
  process.env.GITHUB_WORKSPACE = dir
  process.exitCode = undefined
  stdout = []
  jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout.push(String(chunk))
    return true
  })
})

afterEach(() => {
  jest.restoreAllMocks()
  process.env = { ...saved }
  process.exitCode = undefined
  fs.rmSync(dir, { recursive: true, force: true })
})

/** The `::error` commands written, with their properties decoded. */
function errors(): { title: string | undefined; message: string }[] {
  return stdout
    .join('')
    .split('\n')
    .filter((l) => l.startsWith('::error'))
    .map((l) => {
      const m = /^::error(?: ([^:]*))?::(.*)$/.exec(l)
      const props = new Map(
        (m?.[1] ?? '')
          .split(',')
          .filter(Boolean)
          .map((p) => {
            const [k, v] = p.split('=')
            return [k, decodeURIComponent(v ?? '')] as const
          })
      )
      return { title: props.get('title'), message: decodeURIComponent(m?.[2] ?? '') }
    })
}

test('a bad input is the user’s mistake: annotated as configuration, with the fix in the summary', async () => {
  process.env.INPUT_MODE = 'rn'
  await run()
  expect(process.exitCode).toBe(1)
  const [e, ...more] = errors()
  expect(more).toEqual([])
  expect(e?.title).toBe('Agent Airlock: configuration')
  expect(e?.message).toMatch(/^mode: "rn" is not one of: run, plan, publish/)
  const text = fs.readFileSync(summary, 'utf8')
  expect(text).toContain('Agent Airlock: configuration error')
  expect(text).toContain('`mode`')
  expect(text).toMatch(/is not one of: run, plan, publish/)
  expect(text).toMatch(/change .*`with:`/i)
  expect(text).not.toMatch(/bug|infrastructure/i)
})

test('an engine failure is the environment’s: its own title, and no blame on the configuration', async () => {
  process.env.INPUT_MODE = 'command'
  commandMode.mockRejectedValueOnce(
    new InfrastructureError(
      'the Docker engine is not reachable (connect ENOENT /var/run/docker.sock)'
    )
  )
  await run()
  expect(process.exitCode).toBe(1)
  const [e, ...more] = errors()
  expect(more).toEqual([])
  expect(e?.title).toBe('Agent Airlock: infrastructure')
  expect(e?.message).toContain('the Docker engine is not reachable')
  const text = fs.readFileSync(summary, 'utf8')
  expect(text).toContain('Agent Airlock: infrastructure error')
  expect(text).toMatch(/not a verdict on the agent/)
  expect(text).not.toMatch(/configuration error/i)
})

test('an infrastructure failure during a run says the evidence is kept, and where', async () => {
  await reportFailure(
    new InfrastructureError('the container engine failed during wait'),
    readRunner(process.env),
    {
      outputDir: path.join(dir, 'airlock-out'),
      artifact: 'airlock-31-1'
    }
  )
  expect(process.exitCode).toBe(1)
  expect(errors()[0]?.message).toContain(
    `evidence gathered so far is kept in ${path.join(dir, 'airlock-out')}`
  )
  const text = fs.readFileSync(summary, 'utf8')
  expect(text).toContain(path.join(dir, 'airlock-out'))
  expect(text).toContain('`airlock-31-1`')
})

test('a configuration error found by the run names the input the same way', async () => {
  await reportFailure(
    new ConfigurationError('runtime', '"runsc" is not configured in the Docker daemon'),
    readRunner(process.env),
    {
      outputDir: path.join(dir, 'airlock-out')
    }
  )
  expect(errors()[0]?.title).toBe('Agent Airlock: configuration')
  expect(fs.readFileSync(summary, 'utf8')).toContain('`runtime`')
})

test('a deliberate refusal is neither a bug nor the environment', async () => {
  process.env.INPUT_MODE = 'command'
  commandMode.mockRejectedValueOnce(new ApplyRefused('the branch moved'))
  await run()
  expect(process.exitCode).toBe(1)
  expect(errors()).toEqual([
    { title: 'Agent Airlock: refused', message: 'apply refused: the branch moved' }
  ])
  const text = fs.readFileSync(summary, 'utf8')
  expect(text).toMatch(/not a bug/)
  expect(text).not.toMatch(/report it|infrastructure/i)
})

test.each<[number, string]>([
  [403, 'Agent Airlock: refused'],
  [502, 'Agent Airlock: infrastructure']
])('GitHub answering %d is reported as %s', async (status, title) => {
  await reportFailure(
    new GitHubRequestError(status, 'POST', '/x', `GitHub answered ${status}`),
    readRunner(process.env)
  )
  expect(errors()[0]?.title).toBe(title)
})

test('anything else is an internal error', async () => {
  process.env.INPUT_MODE = 'command'
  commandMode.mockRejectedValueOnce(new TypeError('cannot read properties of undefined'))
  await run()
  expect(process.exitCode).toBe(1)
  expect(errors()).toEqual([
    { title: 'Agent Airlock: internal error', message: 'cannot read properties of undefined' }
  ])
  expect(fs.readFileSync(summary, 'utf8')).toMatch(/internal error[\s\S]*report it/i)
})

test.each([['a string'], [42], [undefined], [null]])(
  'a thrown non-Error (%p) still fails the step',
  async (thrown) => {
    process.env.INPUT_MODE = 'command'
    commandMode.mockImplementationOnce(() => Promise.reject(thrown))
    await run()
    expect(process.exitCode).toBe(1)
    const [e] = errors()
    expect(e?.title).toBe('Agent Airlock: internal error')
    expect(e?.message).toBe(String(thrown))
  }
)

test('hostile text in a message cannot reach the summary as markup', async () => {
  await reportFailure(
    new ConfigurationError('task', '<img src=x> @someone ``` [link](http://x)'),
    readRunner(process.env)
  )
  const text = fs.readFileSync(summary, 'utf8')
  expect(text).not.toContain('<img')
  expect(text).not.toContain('@someone')
  expect(text).not.toContain('](http')
})

test('no summary file: the step still fails, with the annotation', async () => {
  delete process.env.GITHUB_STEP_SUMMARY
  await reportFailure(new ConfigurationError('mode', 'bad'), readRunner(process.env))
  expect(process.exitCode).toBe(1)
  expect(errors()[0]?.title).toBe('Agent Airlock: configuration')
})
