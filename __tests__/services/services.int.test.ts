// Service containers against a real PostgreSQL (built from Debian's packages by
// scripts/prepare-images.sh): each test-command phase gets a fresh database on an internal network,
// reachable by name, health-checked before the phase, removed after it.
import { spawnSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import {
  freePort,
  startDockerRegistry,
  stopDockerRegistry
} from '../../scripts/docker-registry.mjs'
import { BUSYBOX, imageId, leftovers, makeWorkspace, read, runAirlock } from '../support/run.js'
import { forgetPushed, hasImage, pushForDigest } from '../support/registry.js'

const POSTGRES = 'airlock-local/postgres:15'

function postgresService(): string {
  return [
    'db:',
    `  image: ${imageId(POSTGRES)}`,
    '  user: "101:104"',
    '  env: { PGTZ: UTC }',
    '  command: >-',
    '    initdb -D /tmp/pg -U postgres --auth=trust >/dev/null &&',
    '    echo "host all all all trust" >> /tmp/pg/pg_hba.conf &&',
    "    exec postgres -D /tmp/pg -c listen_addresses='*' -k /tmp",
    '  health: pg_isready -h db -U postgres',
    ''
  ].join('\n')
}

// A demo repository whose tests load its schema into the database and query it.
const REPO = {
  'schema.sql': [
    'CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL);',
    "INSERT INTO items (name) VALUES ('first');",
    ''
  ].join('\n'),
  'test.sh': [
    'set -e',
    'psql -h db -U postgres -v ON_ERROR_STOP=1 -q -f schema.sql',
    'n=$(psql -h db -U postgres -tAc "SELECT count(*) FROM items")',
    'echo "items: $n"',
    'test "$n" = 2',
    'echo db tests pass',
    ''
  ].join('\n')
}

describe('services: containers for the test phases', () => {
  test('PostgreSQL by name for the baseline and the tests, fresh each time; removed with the run', async () => {
    const ws = makeWorkspace(REPO, `FROM ${imageId(POSTGRES)}\n`)
    const run = await runAirlock(ws, {
      services: postgresService(),
      'agent-command': `echo "INSERT INTO items (name) VALUES ('second');" >> schema.sql`,
      'test-command': 'sh test.sh',
      'compare-base': 'true',
      memory: '512m'
    })
    const testsLog = read(path.join(run.outputDir, 'logs/tests.log'))
    expect(testsLog).toContain('db tests pass')
    expect({
      outcome: run.report.outcome,
      reason: run.report.outcomeReason,
      testsLog
    }).toMatchObject({ outcome: 'success' })
    expect(testsLog).toContain('items: 2')
    // The baseline had its own database: the schema loaded cleanly there too (one row, so it failed
    // the count), and loading it again for the tests did not collide with the baseline's table.
    const baselineLog = read(path.join(run.outputDir, 'logs/baseline.log'))
    expect(baselineLog).toContain('items: 1')
    expect(run.report.services?.map((s) => [s.name, s.phase, s.healthy])).toEqual([
      ['db', 'baseline', true],
      ['db', 'tests', true]
    ])
    expect(await leftovers(run.report.runId)).toBe(0)
    fs.rmSync(ws, { recursive: true, force: true })
  }, 300_000)

  test('a service that never becomes healthy stops the run before the tests, and is removed', async () => {
    const ws = makeWorkspace({ 'README.md': 'x\n' })
    const run = await runAirlock(ws, {
      services: [
        'cache:',
        `  image: ${imageId(BUSYBOX)}`,
        '  user: "65534"',
        '  command: sleep 120',
        '  health: echo warming up; exit 1',
        '  health-timeout-seconds: 2',
        ''
      ].join('\n'),
      'agent-command': 'true',
      'test-command': 'echo tests ran'
    })
    expect(run.report.outcome).toBe('infrastructure-error')
    expect(run.report.outcomeReason).toMatch(
      /service cache did not become healthy: not healthy within 2 s \(last: health command exited 1: warming up\)/
    )
    expect(run.report.tests.phase).toBeNull()
    expect(run.report.services).toEqual([
      expect.objectContaining({ name: 'cache', phase: 'tests', healthy: false })
    ])
    expect(await leftovers(run.report.runId)).toBe(0)
    fs.rmSync(ws, { recursive: true, force: true })
  }, 120_000)
})

test('a service image pinned by digest and absent from the engine is pulled by that digest from its registry', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-svc-registry-'))
  const port = await freePort()
  // A real registry on loopback (Debian's docker-registry), holding the service's image.
  const registry = await startDockerRegistry(dir, port)
  const ws = makeWorkspace({ 'README.md': 'x\n' })
  let pinned = ''
  try {
    const repo = `localhost:${port}/airlock-it/service-${process.pid}`
    pinned = pushForDigest(repo, BUSYBOX)
    // Forget the local references: the engine has no image by that name and digest.
    forgetPushed(repo, pinned)
    expect(hasImage(pinned)).toBe(false)

    const run = await runAirlock(ws, {
      services: [
        'cache:',
        `  image: ${pinned}`,
        '  user: "65534"',
        '  command: sleep 60',
        '  health: "true"',
        ''
      ].join('\n'),
      'agent-command': 'true',
      'test-command': 'echo tests ran'
    })
    expect({ outcome: run.report.outcome, reason: run.report.outcomeReason }).toMatchObject({
      outcome: 'success'
    })
    expect(hasImage(pinned)).toBe(true)
    expect(run.report.services).toEqual([
      expect.objectContaining({
        name: 'cache',
        image: pinned,
        imageId: imageId(BUSYBOX),
        healthy: true
      })
    ])
    expect(await leftovers(run.report.runId)).toBe(0)
  } finally {
    // The pulled image's reference (its layers are the local busybox's).
    if (pinned !== '') spawnSync('docker', ['rmi', pinned], { stdio: 'ignore' })
    await stopDockerRegistry(registry)
    fs.rmSync(dir, { recursive: true, force: true })
    fs.rmSync(ws, { recursive: true, force: true })
  }
}, 180_000)
