// images/published.json: its shape is checked field by field, and a run's plan names the
// published image only where the run builds the preset's own Dockerfile unchanged.
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { ConfigurationError } from '../../src/errors.js'
import { LOCAL_EVENT } from '../../src/event.js'
import { getInputs } from '../../src/inputs.js'
import { planRun } from '../../src/plan.js'
import { AGENT_KEY_ENV } from '../../src/presets/presets.js'
import { parsePublished, readPublished } from '../../src/presets/published.js'
import { runInputs } from '../../src/presets/run-inputs.js'
import { imageInputsKey } from '../../src/sandbox/docker/image-cache.js'
import { emptyReport } from '../../src/report/empty.js'
import { validateReport } from '../../src/report/schema.js'
import { fixturePlan } from '../../__fixtures__/plan.js'
import { ROOT } from '../support/cli.js'

const D = (c: string): string => `sha256:${c.repeat(64)}`
const ENTRY = {
  image: 'ghcr.io/owner/agent-airlock/claude-code',
  digest: D('a'),
  platforms: { 'linux/amd64': D('b'), 'linux/arm64': D('c') },
  inputsKey: 'd'.repeat(64)
}
const TABLE = {
  version: '1.2.3',
  repository: 'owner/agent-airlock',
  images: { 'claude-code': ENTRY }
}

describe('the published-images table', () => {
  test("this checkout's table is valid", () => {
    expect(() => readPublished(ROOT)).not.toThrow()
  })

  test('a valid table reads back as written', () => {
    expect(parsePublished(JSON.stringify(TABLE))).toEqual(TABLE)
  })

  test.each([
    ['not JSON', '{', /not JSON/],
    [
      'a tag in the image',
      { ...TABLE, images: { 'claude-code': { ...ENTRY, image: 'ghcr.io/o/n:latest' } } },
      /image must be/
    ],
    [
      'a short digest',
      { ...TABLE, images: { 'claude-code': { ...ENTRY, digest: 'sha256:abc' } } },
      /digest must be/
    ],
    [
      'a platform of its own',
      { ...TABLE, images: { 'claude-code': { ...ENTRY, platforms: { 'windows/amd64': D('b') } } } },
      /not linux/
    ],
    [
      'no platforms',
      { ...TABLE, images: { 'claude-code': { ...ENTRY, platforms: {} } } },
      /platforms must/
    ],
    ['images without a version', { ...TABLE, version: null }, /without the version/],
    ['a version that is not semver', { ...TABLE, version: 'v1' }, /semver/],
    [
      'no inputs key',
      { ...TABLE, images: { 'claude-code': { ...ENTRY, inputsKey: undefined } } },
      /inputsKey/
    ]
  ])('refuses %s, naming the field', (_, value, message) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value)
    expect(() => parsePublished(text)).toThrow(ConfigurationError)
    expect(() => parsePublished(text)).toThrow(message)
  })
})

describe("a run's plan", () => {
  let root: string
  let ws: string
  beforeAll(() => {
    // An action checkout whose table names an image for claude-code.
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-published-unit-'))
    fs.cpSync(path.join(ROOT, 'images', 'agents'), path.join(root, 'images', 'agents'), {
      recursive: true
    })
    fs.writeFileSync(path.join(root, 'images', 'published.json'), JSON.stringify(TABLE))
    ws = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-published-ws-'))
    execFileSync('git', ['init', '-q', ws])
    fs.writeFileSync(path.join(ws, 'Dockerfile'), 'FROM scratch\n')
  })
  afterAll(() => {
    fs.rmSync(root, { recursive: true, force: true })
    fs.rmSync(ws, { recursive: true, force: true })
  })

  async function plan(raw: Record<string, string>, tableRoot = root) {
    const env = { [AGENT_KEY_ENV]: 'sk-test' }
    const run = await runInputs((n) => ({ ref: 'HEAD', task: 'do it', ...raw })[n], {
      workspace: ws,
      env,
      event: LOCAL_EVENT,
      root: tableRoot
    })
    const inputs = getInputs(run.read, {
      workspace: ws,
      environment: env,
      hostUid: 1000,
      event: LOCAL_EVENT,
      hostCpus: 4,
      defaultRunId: 'unit-1',
      ...run.context
    })
    return planRun(inputs)
  }

  test("names the published image for the preset's own Dockerfile", async () => {
    const p = await plan({ agent: 'claude-code' })
    expect(p.image).toMatchObject({
      kind: 'build',
      dockerfile: path.join(root, 'images', 'agents', 'claude-code', 'Dockerfile'),
      published: { ...ENTRY, version: '1.2.3', repository: 'owner/agent-airlock' }
    })
  })

  test.each([
    ['build args of its own', { 'build-args': 'BASE=x@sha256:' + 'e'.repeat(64) }],
    ['a Dockerfile of its own', { dockerfile: 'Dockerfile' }],
    ['an image of its own', { image: 'r.example/x@sha256:' + 'e'.repeat(64) }]
  ])('does not, with %s', async (_, raw) => {
    const p = await plan({ agent: 'claude-code', ...raw })
    expect(p.image.kind === 'build' ? p.image.published : undefined).toBeUndefined()
  })

  test("the release script's key is the key the action computes for the preset's plan", async () => {
    const p = await plan({ agent: 'claude-code' })
    const script = execFileSync(process.execPath, [
      path.join(ROOT, 'scripts', 'published-images.mjs'),
      'key',
      'claude-code'
    ])
      .toString()
      .trim()
    expect(script).toMatch(/^[a-f0-9]{64}$/)
    expect(await imageInputsKey(p.image)).toBe(script)
  })

  test('does not, for a preset the table does not list, or an unreleased checkout', async () => {
    const codex = await plan({ agent: 'codex' })
    expect(codex.image.kind === 'build' && codex.image.published).toBeFalsy()
    const unreleased = await plan({ agent: 'claude-code' }, ROOT)
    expect(unreleased.image.kind === 'build' && unreleased.image.published).toBeFalsy()
  })
})

describe("the report's record of the image", () => {
  const published = {
    image: ENTRY.image,
    digest: ENTRY.digest,
    version: '1.2.3',
    repository: 'owner/agent-airlock'
  }
  test.each([
    [
      'pulled and attested',
      {
        source: 'pulled',
        published: {
          ...published,
          used: true,
          attestation: { status: 'verified', detail: 'signed by …' }
        }
      }
    ],
    [
      'built instead, and why',
      {
        source: 'built',
        published: { ...published, used: false, reason: 'the registry did not give it' }
      }
    ],
    ['found on the engine', { source: 'cache' }]
  ] as const)('%s: valid against the schema', (_, image) => {
    const report = emptyReport(fixturePlan())
    report.image = { ...report.image, ...image }
    expect(validateReport(report)).toEqual({ valid: true, errors: [] })
  })

  test('an unknown source is not', () => {
    const report = emptyReport(fixturePlan())
    report.image = { ...report.image, source: 'downloaded' as 'pulled' }
    expect(validateReport(report)).toMatchObject({ valid: false })
  })
})
