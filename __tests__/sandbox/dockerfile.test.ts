import { UnpinnedBaseError, baseImages } from '../../src/sandbox/dockerfile.js'

const D = 'c'.repeat(64)

describe('baseImages', () => {
  it.each([
    ['digest-pinned', `FROM node:20@sha256:${D}`, {}, [['digest', `sha256:${D}`]]],
    ['image id', `FROM sha256:${D}`, {}, [['image-id', `sha256:${D}`]]],
    ['tag only', 'FROM node:20', {}, [['unpinned', undefined]]],
    ['no tag', 'from ubuntu', {}, [['unpinned', undefined]]],
    ['scratch', 'FROM scratch', {}, [['scratch', undefined]]],
    [
      'platform flag',
      `FROM --platform=linux/amd64 alpine@sha256:${D} AS build`,
      {},
      [['digest', `sha256:${D}`]]
    ],
    [
      'earlier stage',
      `FROM alpine@sha256:${D} AS build\nFROM build`,
      {},
      [
        ['digest', `sha256:${D}`],
        ['stage', undefined]
      ]
    ],
    ['arg default', `ARG BASE=alpine@sha256:${D}\nFROM \${BASE}`, {}, [['digest', `sha256:${D}`]]],
    [
      'arg overridden by a build arg',
      'ARG BASE=alpine@sha256:x\nFROM $BASE',
      { BASE: 'alpine:3' },
      [['unpinned', undefined]]
    ],
    [
      'arg from build args',
      'ARG BASE\nFROM ${BASE}',
      { BASE: `sha256:${D}` },
      [['image-id', `sha256:${D}`]]
    ],
    ['line continuation', `FROM \\\n  alpine@sha256:${D}`, {}, [['digest', `sha256:${D}`]]],
    [
      'comments ignored',
      `# FROM evil:latest\nFROM alpine@sha256:${D}`,
      {},
      [['digest', `sha256:${D}`]]
    ],
    [
      'two stages, second unpinned',
      `FROM a@sha256:${D}\nFROM b:latest`,
      {},
      [
        ['digest', `sha256:${D}`],
        ['unpinned', undefined]
      ]
    ],
    ['short digest is not pinned', 'FROM a@sha256:abc', {}, [['unpinned', undefined]]]
  ])('%s', (_title, text, args, expected) => {
    expect(baseImages(text, args as Record<string, string>).map((b) => [b.pin, b.digest])).toEqual(
      expected
    )
  })

  it('reports the line of each FROM', () => {
    expect(baseImages('# c\n\nFROM x:1\nRUN true\nFROM y:2', {}).map((b) => b.line)).toEqual([3, 5])
  })
})

describe('a FROM that names a build arg without a value', () => {
  it.each([
    ['ARG BASE\nFROM ${BASE}', '${BASE}', ['BASE']],
    ['ARG BASE\nFROM $BASE AS build', '$BASE', ['BASE']],
    ['FROM ${REGISTRY}/node:${TAG}', '${REGISTRY}/node:${TAG}', ['REGISTRY', 'TAG']],
    ['ARG BASE=""\nFROM ${BASE}', '${BASE}', ['BASE']]
  ])('%s names the arg', (dockerfile, written, unset) => {
    const [base] = baseImages(dockerfile, {})
    expect(base).toMatchObject({ pin: 'unpinned', written, unset })
  })

  it('an arg with a value, or a default in the FROM itself, is not unset', () => {
    expect(baseImages(`ARG BASE\nFROM \${BASE}`, { BASE: `alpine@sha256:${D}` })[0]).toEqual({
      ref: `alpine@sha256:${D}`,
      pin: 'digest',
      digest: `sha256:${D}`,
      line: 2
    })
    expect(baseImages(`FROM \${BASE:-alpine@sha256:${D}}`, {})[0].unset).toBeUndefined()
  })

  it('the error names the arg and how to give it a value, not an empty image name', () => {
    const error = new UnpinnedBaseError(baseImages('# syntax\nARG BASE\nFROM ${BASE}\n', {}))
    expect(error.message).toMatch(
      /^dockerfile: the build arg BASE has no value: FROM \$\{BASE\} \(line 3\) names no image; give it one with build-args: BASE=<image>@sha256:<digest> \(CLI: --build-args BASE=<image>@sha256:<digest>\)/
    )
    expect(error.message).not.toMatch(/: {2}\(line/)
  })
})

it('a build arg given but not declared before the first FROM: the fix is the ARG line', () => {
  const bases = baseImages('FROM ${BASE}\n', { BASE: `alpine@sha256:${D}` })
  expect(bases[0]).toMatchObject({ pin: 'unpinned', unset: ['BASE'], undeclared: ['BASE'] })
  expect(new UnpinnedBaseError(bases).message).toMatch(
    /the build arg BASE has no value: FROM \$\{BASE\} \(line 1\) names no image; it is given in build-args but not declared: add `ARG BASE` before the first FROM \(Docker substitutes only those\)/
  )
})
