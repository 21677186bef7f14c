// Two repositories run with the CLI on one machine share its cache folder: each has its own scope,
// so one repository's install never reads what another's wrote, nor writes what another will read.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { FolderStore } from '../../src/cache/store.js'
import { makeWorkspace, read, runAirlock } from '../support/run.js'

describe('one machine, two repositories, one cache folder', () => {
  let root: string
  const made: string[] = []
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-cache-repos-'))
  })
  afterAll(() => {
    for (const ws of [root, ...made]) fs.rmSync(ws, { recursive: true, force: true })
  })

  /** A run whose install lists what the cache folder holds, then adds its own file to it. */
  async function install(ws: string) {
    const run = await runAirlock(
      ws,
      {
        // The same command in both repositories: each names itself from its own file.
        'setup-command':
          'ls "$AIRLOCK_CACHE_DIR"; cp name.txt "$AIRLOCK_CACHE_DIR/from-$(cat name.txt)"',
        'agent-command': 'true',
        'test-command': 'true'
      },
      { cache: new FolderStore(root) }
    )
    expect(run.report.outcome).toBe('success')
    return { run, seen: read(path.join(run.outputDir, 'logs/setup.log')) }
  }

  it("B, run after A with the same lockfiles and command, neither reads A's entry nor writes one A reads", async () => {
    const a = makeWorkspace({ 'package-lock.json': '{}\n', 'name.txt': 'a' })
    const b = makeWorkspace({ 'package-lock.json': '{}\n', 'name.txt': 'b' })
    made.push(a, b)
    const a1 = await install(a)
    expect(a1.run.report.setup?.cache).toMatchObject({ restored: null, saved: 'saved' })
    const a2 = await install(a)
    expect(a2.run.report.setup?.cache).toMatchObject({
      restored: a1.run.report.setup?.cache?.key,
      saved: 'exists'
    })
    expect(a2.seen).toContain('from-a')

    const b1 = await install(b)
    expect(b1.run.report.setup?.cache?.restored).toBeNull()
    expect(b1.seen).not.toContain('from-a')
    expect(b1.run.report.setup?.cache?.key).not.toBe(a1.run.report.setup?.cache?.key)
    expect(b1.run.report.setup?.cache?.saved).toBe('saved')

    // A again: its own entry, never B's newer one (nothing of B's in what it restores).
    const a3 = await install(a)
    expect(a3.run.report.setup?.cache?.restored).toBe(a1.run.report.setup?.cache?.key)
    expect(a3.seen).not.toContain('from-b')
  }, 240_000)
})
