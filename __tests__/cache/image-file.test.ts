// The image cache's save file, decided without an engine: which layers a thin file keeps (by the
// chain IDs the engine keys its layers by), which images a file declares, and which of them a
// refused load removes again; how a base the saved image needs is provided.
import { createHash } from 'node:crypto'
import type Docker from 'dockerode'
import { provideBase } from '../../src/sandbox/docker/image-cache.js'
import {
  chainIds,
  declaredImages,
  imagesToRemove,
  ownLayers
} from '../../src/sandbox/docker/save-file.js'
import { testHost } from '../support/host.js'

const d = (s: string): string => `sha256:${createHash('sha256').update(s).digest('hex')}`

describe('chainIds', () => {
  test('the first is the diff ID, each next the digest of "parent diff"', () => {
    const [a, b] = [d('a'), d('b')]
    expect(chainIds([a, b])).toEqual([a, d(`${a} ${b}`)])
    expect(chainIds([])).toEqual([])
  })
})

describe('ownLayers', () => {
  const [x, y, z, e] = [d('x'), d('y'), d('z'), d('empty')]
  test.each([
    ['one base below', [x, y, z], [[x, y]], [z]],
    ['no base (FROM scratch)', [x, y], [], [x, y]],
    ['the base is the image', [x, y], [[x, y]], []],
    // The same content above the base is the image's own: another chain, loaded from the file.
    ['a layer equal to a base layer, higher up', [x, e, y, e], [[x, e]], [y, e]],
    ['a base that is not below the image (another stage)', [x, y], [[y]], [x, y]],
    ['two bases, the lower one shared', [x, y, z], [[x], [x, y]], [z]]
  ])('%s', (_name, image, bases, own) => {
    expect([...ownLayers(image, bases)].sort()).toEqual([...own].sort())
  })
})

describe('declaredImages', () => {
  const config = d('config')
  const digests = new Map([
    ['abc.json', config],
    ['blobs/sha256/def', d('other')]
  ])
  test('each manifest entry is the digest of its configuration file', () => {
    expect(declaredImages(JSON.stringify([{ Config: 'abc.json', Layers: [] }]), digests)).toEqual({
      images: [config]
    })
    expect(
      declaredImages(
        JSON.stringify([{ Config: './abc.json' }, { Config: 'blobs/sha256/def' }]),
        digests
      )
    ).toEqual({ images: [config, d('other')] })
  })
  test.each([
    ['no manifest (the legacy format loads images the check cannot see)', undefined],
    ['not JSON', '{'],
    ['no entry', '[]'],
    ['not a list', '{"Config":"abc.json"}'],
    ['a configuration the file does not hold', JSON.stringify([{ Config: 'zzz.json' }])],
    ['a configuration that is no name', JSON.stringify([{ Config: 7 }])]
  ])('%s: a problem, nothing trusted', (_name, manifest) => {
    expect(declaredImages(manifest, digests)).toHaveProperty('problem')
  })
})

describe('imagesToRemove after a refused load', () => {
  test('only what the file declared and the engine did not have before', () => {
    const [mine, had] = [d('mine'), d('had')]
    // An image another run created meanwhile is not declared by the file: never in the list.
    expect(imagesToRemove([mine, had], new Set([had]))).toEqual([mine])
    expect(imagesToRemove([had], new Set([had]))).toEqual([])
  })
})

describe('provideBase', () => {
  const id = d('base-config')
  const pinned = `127.0.0.1:5000/x@${d('manifest')}`
  /** An engine that has the given images (by reference) and answers pulls as told. */
  function engine(
    images: Record<string, string>,
    pull: (ref: string) => Promise<void>
  ): { docker: Docker; pulls: string[] } {
    const pulls: string[] = []
    const docker = {
      getImage: (ref: string) => ({
        inspect: async () => {
          if (images[ref] === undefined)
            throw Object.assign(new Error('No such image'), { statusCode: 404 })
          return { Id: images[ref] }
        }
      }),
      pull: async (ref: string) => {
        pulls.push(ref)
        await pull(ref)
        images[ref] = id
        return {}
      },
      modem: { followProgress: (_s: unknown, done: (e: Error | null) => void) => done(null) }
    } as unknown as Docker
    return { docker, pulls }
  }

  test('a base on the engine with the recorded ID: nothing pulled', async () => {
    const { docker, pulls } = engine({ [pinned]: id }, async () => undefined)
    expect(await provideBase(docker, { ref: pinned, id }, testHost.engineTimeoutMs)).toEqual({
      ok: true,
      pulled: false
    })
    expect(pulls).toEqual([])
  })
  test('an absent base pinned by digest is pulled by that digest', async () => {
    const { docker, pulls } = engine({}, async () => undefined)
    expect(await provideBase(docker, { ref: pinned, id }, testHost.engineTimeoutMs)).toEqual({
      ok: true,
      pulled: true
    })
    expect(pulls).toEqual([pinned])
  })
  test('an absent base pinned by image ID is never fetched', async () => {
    const { docker, pulls } = engine({}, async () => undefined)
    expect(await provideBase(docker, { ref: id, id }, testHost.engineTimeoutMs)).toEqual({
      ok: false,
      problem: `base ${id} is not on this engine`
    })
    expect(pulls).toEqual([])
  })
  test('a pull the registry refuses: a problem, no restore', async () => {
    const { docker } = engine({}, async () => {
      throw Object.assign(new Error('connection refused'), { statusCode: 500 })
    })
    const r = await provideBase(docker, { ref: pinned, id }, testHost.engineTimeoutMs)
    expect(r).toMatchObject({ ok: false })
    expect(!r.ok && r.problem).toMatch(/could not be pulled: connection refused/)
  })
  test('an engine that drops the connection: its fault, thrown', async () => {
    const { docker } = engine({}, async () => {
      throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })
    })
    await expect(
      provideBase(docker, { ref: pinned, id }, testHost.engineTimeoutMs)
    ).rejects.toThrow(/socket hang up/)
  })
  test('a base that is another image here: a problem', async () => {
    const { docker } = engine({ [pinned]: d('other') }, async () => undefined)
    expect(await provideBase(docker, { ref: pinned, id }, testHost.engineTimeoutMs)).toMatchObject({
      ok: false
    })
  })
})
