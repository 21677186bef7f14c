// The image cache's save file, decided without an engine: which layers a thin file keeps (by the
// chain IDs the engine keys its layers by), which images a file declares, and which of them a
// refused load removes again.
import { createHash } from 'node:crypto'
import {
  chainIds,
  declaredImages,
  imagesToRemove,
  ownLayers
} from '../../src/sandbox/docker/image-cache.js'

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
