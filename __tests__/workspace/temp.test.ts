import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { TEMP_MARKER, makeRunTemp, removeRunTemps, runTemps } from '../../src/workspace/temp.js'
import { testHost } from '../support/host.js'

let root: string
let outside: string
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-temproot-'))
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-outside-'))
  fs.writeFileSync(path.join(outside, 'precious'), 'keep me')
})
afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true })
  fs.rmSync(outside, { recursive: true, force: true })
})

describe('a run’s temporary folders', () => {
  it('are found by name and marker, and removed without following symlinks', async () => {
    const mine = await makeRunTemp(root, 'run-1')
    fs.mkdirSync(path.join(mine, 'ws', 'deep'), { recursive: true })
    fs.symlinkSync(outside, path.join(mine, 'ws', 'link-out'))
    fs.chmodSync(path.join(mine, 'ws', 'deep'), 0o000)
    // Look-alikes that are not the run's folders.
    const other = await makeRunTemp(root, 'run-1-b')
    fs.symlinkSync(outside, path.join(root, 'airlock-run-1-AbCdEf'))
    fs.mkdirSync(path.join(root, 'airlock-run-1-nomark'))
    const wrongMarker = path.join(root, 'airlock-run-1-wrongm')
    fs.mkdirSync(wrongMarker)
    fs.writeFileSync(path.join(wrongMarker, TEMP_MARKER), 'run-2')

    expect(await runTemps(root, 'run-1')).toEqual([mine])
    expect(await removeRunTemps(root, 'run-1', testHost.toolEnv)).toBe(1)
    expect(fs.existsSync(mine)).toBe(false)
    expect(fs.existsSync(other)).toBe(true)
    expect(fs.existsSync(wrongMarker)).toBe(true)
    expect(fs.lstatSync(path.join(root, 'airlock-run-1-AbCdEf')).isSymbolicLink()).toBe(true)
    expect(fs.readFileSync(path.join(outside, 'precious'), 'utf8')).toBe('keep me')
    expect(fs.statSync(outside).mode & 0o777).not.toBe(0)
  })

  it('a run id with regex characters matches only itself', async () => {
    await makeRunTemp(root, 'a.b')
    expect(await runTemps(root, 'aXb')).toEqual([])
    expect(await runTemps(root, 'a.b')).toHaveLength(1)
  })
})
