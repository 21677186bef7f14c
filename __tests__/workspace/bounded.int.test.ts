import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { makeScratch, mountsUnder } from '../../src/workspace/bounded.js'
import { makeRunTemp, removeRunTemps } from '../../src/workspace/temp.js'
import { testHost } from '../support/host.js'

// Mounting needs root or passwordless sudo: CI runs as root, GitHub-hosted runners have sudo.
describe('the workspace-size filesystem', () => {
  let root: string
  beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-scratch-'))))
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

  it('is a mounted filesystem of the size, reports full, and release leaves nothing', async () => {
    const tmp = await makeRunTemp(root, 'scratch-a')
    const warnings: string[] = []
    const scratch = await makeScratch(
      tmp,
      { sizeBytes: 32 * 1024 ** 2, required: true },
      (l) => warnings.push(l),
      testHost.toolEnv
    )
    expect(scratch.enforced).toBe(true)
    expect(warnings).toEqual([])
    expect(await mountsUnder(tmp)).toEqual([scratch.dir])
    expect(fs.readdirSync(scratch.dir)).toEqual([])
    expect(await scratch.full()).toBe(false)
    // Fill it from the host: the kernel stops the write at the limit.
    const fd = fs.openSync(path.join(scratch.dir, 'big'), 'w')
    const chunk = Buffer.alloc(1024 * 1024)
    let written = 0
    let error: NodeJS.ErrnoException | undefined
    try {
      for (let i = 0; i < 64; i++) written += fs.writeSync(fd, chunk)
    } catch (e) {
      error = e as NodeJS.ErrnoException
    } finally {
      fs.closeSync(fd)
    }
    expect(error?.code).toBe('ENOSPC')
    expect(written).toBeLessThanOrEqual(32 * 1024 ** 2)
    expect(await scratch.full()).toBe(true)
    expect(await scratch.release()).toBeUndefined()
    expect(await mountsUnder(tmp)).toEqual([])
    expect(fs.readdirSync(tmp).sort()).toEqual(['.airlock-run', 'scratch'])
  })

  it('cleanup --run-id unmounts what a killed run left mounted, then removes the folder', async () => {
    const tmp = await makeRunTemp(root, 'scratch-b')
    await makeScratch(
      tmp,
      { sizeBytes: 32 * 1024 ** 2, required: true },
      () => undefined,
      testHost.toolEnv
    )
    expect((await mountsUnder(tmp)).length).toBe(1)
    expect(await removeRunTemps(root, 'scratch-b', testHost.toolEnv)).toBe(1)
    expect(await mountsUnder(tmp)).toEqual([])
    expect(fs.existsSync(tmp)).toBe(false)
  })
})
