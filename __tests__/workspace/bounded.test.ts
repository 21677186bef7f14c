import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { ConfigurationError } from '../../src/errors.js'
import { formatSize, makeScratch } from '../../src/workspace/bounded.js'
import { testHost } from '../support/host.js'

// Runners where the limit cannot be mounted (no root, no passwordless sudo, or mount refused).
describe('a workspace-size this runner cannot enforce', () => {
  let tmp: string
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-scratch-unit-'))))
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }))

  const noPrivilege = (): Promise<null> => Promise.resolve(null)
  // `false mount ...`: a privileged command that always fails, as a refused mount does.
  const mountRefused = (): Promise<string[]> => Promise.resolve(['false'])

  it.each([
    ['no root and no sudo', noPrivilege, /needs root or passwordless sudo/],
    ['the mount refused', mountRefused, /Command failed/]
  ])('set explicitly (%s): refused, naming workspace-size and the fix', async (_, how, reason) => {
    const error = await makeScratch(
      tmp,
      { sizeBytes: 64 * 1024 ** 2, required: true },
      () => undefined,
      testHost.toolEnv,
      how
    ).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ConfigurationError)
    const e = error as ConfigurationError
    expect(e.input).toBe('workspace-size')
    expect(e.message).toMatch(/64 MiB cannot be enforced/)
    expect(e.message).toMatch(reason)
    expect(e.message).toMatch(/passwordless sudo/)
    // No image file left behind.
    expect(fs.readdirSync(tmp)).toEqual(['scratch'])
  })

  it.each([
    ['no root and no sudo', noPrivilege],
    ['the mount refused', mountRefused]
  ])(
    'by default (%s): a plain folder, with a warning, reported as not enforced',
    async (_, how) => {
      const warnings: string[] = []
      const scratch = await makeScratch(
        tmp,
        { sizeBytes: 4 * 1024 ** 3, required: false },
        (l) => warnings.push(l),
        testHost.toolEnv,
        how
      )
      expect(scratch.enforced).toBe(false)
      expect(scratch.dir).toBe(path.join(tmp, 'scratch'))
      expect(warnings.join('\n')).toMatch(/NOT bounded/)
      expect(await scratch.full()).toBe(false)
      expect(await scratch.release()).toBeUndefined()
      expect(fs.readdirSync(tmp)).toEqual(['scratch'])
    }
  )
})

describe('formatSize', () => {
  it.each([
    [64 * 1024 ** 2, '64 MiB'],
    [4 * 1024 ** 3, '4 GiB'],
    [1.5 * 1024 ** 3, '1.5 GiB'],
    [16 * 1024 ** 4, '16 TiB'],
    [1000, '1000 bytes']
  ])('%d → %s', (bytes, text) => {
    expect(formatSize(bytes)).toBe(text)
  })
})
