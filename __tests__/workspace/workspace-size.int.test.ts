import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { FolderStore } from '../../src/cache/store.js'
import { leftovers, makeWorkspace, read, runAirlock, uniqueRunId } from '../support/run.js'

const MiB = 1024 * 1024

/**
 * Bytes the host's own disk holds under `dir`: every regular file's allocated blocks, not
 * descending into another filesystem mounted below it (the run's bounded scratch filesystem is
 * counted through its image file, whose blocks are what the runner's disk pays).
 */
function hostBytes(dir: string, dev = fs.lstatSync(dir).dev): number {
  let total = 0
  for (const name of fs.readdirSync(dir)) {
    const p = path.join(dir, name)
    const st = fs.lstatSync(p, { throwIfNoEntry: false })
    if (!st || st.dev !== dev) continue
    if (st.isDirectory()) total += hostBytes(p, dev)
    else if (st.isFile()) total += st.blocks * 512
  }
  return total
}

/**
 * Samples, every 100 ms until stopped, the bytes the host's disk holds under `root` (the peak)
 * and whether the run's temporary folder appeared there.
 */
function watchHostDisk(
  root: string,
  runId: string
): { stop(): { peak: number; sawRunFolder: boolean } } {
  let peak = 0
  let sawRunFolder = false
  const timer = setInterval(() => {
    try {
      if (fs.readdirSync(root).some((d) => d.startsWith(`airlock-${runId}-`))) sawRunFolder = true
      peak = Math.max(peak, hostBytes(root))
    } catch {
      // a folder removed while walking: the next sample counts
    }
  }, 100)
  return {
    stop() {
      clearInterval(timer)
      return { peak, sawRunFolder }
    }
  }
}

function mountsUnder(dir: string): string[] {
  return read('/proc/self/mountinfo')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((m): m is string => m !== undefined && m.startsWith(dir + '/'))
}

describe('workspace-size', () => {
  let ws: string
  let tempRoot: string
  afterEach(() => {
    fs.rmSync(ws, { recursive: true, force: true })
    fs.rmSync(tempRoot, { recursive: true, force: true })
  })

  it('an agent writing past the limit gets ENOSPC, the host disk stays within the limit, and the run is a policy violation', async () => {
    ws = makeWorkspace({ 'README.md': 'hello\n' })
    tempRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-wsize-'))
    const runId = uniqueRunId('wsize')
    // Watch the host folder that holds the run's temporary files while the agent writes.
    const watch = watchHostDisk(tempRoot, runId)
    let seen = { peak: 0, sawRunFolder: false }
    let run: Awaited<ReturnType<typeof runAirlock>>
    try {
      run = await runAirlock(
        ws,
        {
          'run-id': runId,
          'workspace-size': '64m',
          'agent-command':
            'dd if=/dev/zero of=big bs=1M count=200 2>&1; echo "dd exit $?"; echo "big holds $(wc -c < big) bytes"; sleep 1'
        },
        { tempRoot }
      )
    } finally {
      seen = watch.stop()
    }
    const agentLog = read(path.join(run.outputDir, 'logs/agent.log'))
    expect(agentLog).toContain('No space left on device')
    const written = Number(/big holds (\d+) bytes/.exec(agentLog)?.[1])
    expect(written).toBeGreaterThan(16 * MiB)
    expect(written).toBeLessThanOrEqual(64 * MiB)
    // The runner's disk paid at most the limit (plus the filesystem's own bookkeeping).
    expect(seen.sawRunFolder).toBe(true)
    expect(seen.peak).toBeGreaterThan(16 * MiB)
    expect(seen.peak).toBeLessThanOrEqual(66 * MiB)
    expect(run.report.outcome).toBe('policy-violation')
    expect(run.report.policy.violations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          rule: 'workspace-size',
          detail: expect.stringContaining('64 MiB')
        })
      ])
    )
    expect(run.report.sandbox.workspace).toEqual({
      sizeBytes: 64 * MiB,
      enforced: true,
      full: true
    })
    // The evidence is kept: the diff names the file the agent wrote.
    expect(run.report.diff.files.map((f) => f.path)).toContain('big')
    // Nothing left: no container, no mount, no temporary folder.
    expect(await leftovers(runId)).toBe(0)
    expect(mountsUnder(tempRoot)).toEqual([])
    expect(fs.readdirSync(tempRoot)).toEqual([])
  })

  it('an install writing past the limit into the dependency cache gets ENOSPC too: the cache folder is on the bounded filesystem', async () => {
    ws = makeWorkspace({ 'README.md': 'hello\n' })
    tempRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-wsize-'))
    const storeRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-wsize-store-'))
    const runId = uniqueRunId('wsize-cache')
    const watch = watchHostDisk(tempRoot, runId)
    let seen = { peak: 0, sawRunFolder: false }
    let run: Awaited<ReturnType<typeof runAirlock>>
    try {
      run = await runAirlock(
        ws,
        {
          'run-id': runId,
          'workspace-size': '64m',
          'image-cache': 'off',
          'setup-command':
            'dd if=/dev/zero of="$AIRLOCK_CACHE_DIR/big" bs=1M count=200 2>&1; echo "cache holds $(wc -c < "$AIRLOCK_CACHE_DIR/big") bytes"; sleep 1',
          'agent-command': 'true'
        },
        { tempRoot, cache: new FolderStore(storeRoot) }
      )
    } finally {
      seen = watch.stop()
      fs.rmSync(storeRoot, { recursive: true, force: true })
    }
    const setupLog = read(path.join(run.outputDir, 'logs/setup.log'))
    expect(setupLog).toContain('No space left on device')
    const written = Number(/cache holds (\d+) bytes/.exec(setupLog)?.[1])
    expect(written).toBeGreaterThan(16 * MiB)
    expect(written).toBeLessThanOrEqual(64 * MiB)
    expect(seen.sawRunFolder).toBe(true)
    expect(seen.peak).toBeGreaterThan(16 * MiB)
    expect(seen.peak).toBeLessThanOrEqual(66 * MiB)
    expect(run.report.policy.violations).toEqual(
      expect.arrayContaining([expect.objectContaining({ rule: 'workspace-size' })])
    )
    expect(await leftovers(runId)).toBe(0)
    expect(mountsUnder(tempRoot)).toEqual([])
    expect(fs.readdirSync(tempRoot)).toEqual([])
  })

  it('a run within the limit is unaffected and records the bound', async () => {
    ws = makeWorkspace({ 'README.md': 'hello\n' })
    tempRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-wsize-'))
    const run = await runAirlock(
      ws,
      {
        'workspace-size': '64m',
        'agent-command': 'dd if=/dev/zero of=small bs=1M count=8 2>/dev/null; df -k . | tail -1'
      },
      { tempRoot }
    )
    expect(run.report.outcome).toBe('success')
    expect(run.report.sandbox.workspace).toEqual({
      sizeBytes: 64 * MiB,
      enforced: true,
      full: false
    })
    // The provenance statement binds the bound as it was made.
    const statement = JSON.parse(read(path.join(run.outputDir, 'provenance.json'))) as {
      predicate: { sandbox: { workspace?: unknown } }
    }
    expect(statement.predicate.sandbox.workspace).toEqual(run.report.sandbox.workspace)
    // Inside, the workspace is a filesystem of the limit's size.
    const df = read(path.join(run.outputDir, 'logs/agent.log')).trim().split('\n').pop() ?? ''
    const totalKiB = Number(df.trim().split(/\s+/)[1])
    expect(totalKiB).toBeGreaterThan(56 * 1024)
    expect(totalKiB).toBeLessThanOrEqual(64 * 1024)
    expect(fs.readdirSync(tempRoot)).toEqual([])
  })
})
