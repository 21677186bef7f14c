// Choosing the image builder (BuildKit or classic), reading BuildKit's progress, and falling back
// to the classic builder when the engine refuses a BuildKit request.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { PassThrough } from 'node:stream'
import type Docker from 'dockerode'
import type { BaseImage } from '../../src/sandbox/dockerfile.js'
import { build, pickBuilder } from '../../src/sandbox/docker/build.js'
import { buildkitTrace, protoFields } from '../../src/sandbox/docker/buildkit-trace.js'
import { contextEntries } from '../../src/sandbox/docker/build-context.js'

const linux = { os: 'linux', apiVersion: '1.41' }
const tag: BaseImage = { ref: 'airlock-local/busybox:1', pin: 'unpinned', line: 1 }
const digest: BaseImage = {
  ref: `localhost:5000/x@sha256:${'a'.repeat(64)}`,
  pin: 'digest',
  digest: `sha256:${'a'.repeat(64)}`,
  line: 1
}
const byId: BaseImage = {
  ref: `sha256:${'b'.repeat(64)}`,
  pin: 'image-id',
  digest: `sha256:${'b'.repeat(64)}`,
  line: 1
}

describe('pickBuilder', () => {
  test.each<
    [
      string,
      { os: string | null; apiVersion: string | null },
      BaseImage[],
      NodeJS.ProcessEnv,
      string,
      RegExp
    ]
  >([
    ['Linux engine, API 1.41, digest base', linux, [digest], {}, 'buildkit', /has BuildKit/],
    ['a tag base', linux, [tag], {}, 'buildkit', /has BuildKit/],
    ['FROM scratch only', linux, [], {}, 'buildkit', /has BuildKit/],
    ['a base named by image ID', linux, [digest, byId], {}, 'classic', /local image ID/],
    [
      'DOCKER_BUILDKIT=0',
      linux,
      [digest],
      { DOCKER_BUILDKIT: '0' },
      'classic',
      /DOCKER_BUILDKIT=0/
    ],
    [
      'DOCKER_BUILDKIT=1 is no override',
      linux,
      [byId],
      { DOCKER_BUILDKIT: '1' },
      'classic',
      /image ID/
    ],
    ['API 1.38', { os: 'linux', apiVersion: '1.38' }, [digest], {}, 'classic', /needs 1.39/],
    ['API 2.0', { os: 'linux', apiVersion: '2.0' }, [digest], {}, 'buildkit', /BuildKit/],
    ['unknown API', { os: 'linux', apiVersion: null }, [digest], {}, 'classic', /unknown/],
    ['a Windows engine', { os: 'windows', apiVersion: '1.41' }, [digest], {}, 'classic', /windows/]
  ])('%s', (_name, engine, bases, env, builder, reason) => {
    const c = pickBuilder(engine, bases, env)
    expect(c.builder).toBe(builder)
    expect(c.reason).toMatch(reason)
  })
})

/** A minimal protobuf encoder for the test's own messages. */
const varint = (n: number): Buffer => {
  const out: number[] = []
  while (n > 127) {
    out.push((n & 0x7f) | 0x80)
    n = Math.floor(n / 128)
  }
  out.push(n)
  return Buffer.from(out)
}
const bytesField = (num: number, b: Buffer | string): Buffer => {
  const data = typeof b === 'string' ? Buffer.from(b) : b
  return Buffer.concat([varint(num * 8 + 2), varint(data.length), data])
}
const intField = (num: number, v: number): Buffer => Buffer.concat([varint(num * 8), varint(v)])

describe('BuildKit progress', () => {
  test('a real trace event from the engine: the completed step is logged once', () => {
    // Captured from Docker 20.10's `POST /build?version=2`: step "[3/3] RUN cat /a.txt", completed.
    const aux =
      'CsMBCkdzaGEyNTY6NWVkNjk0MzViOTJmZDNkNDFiYWI4OWQ1ODZkNWNkMjBiYjU1ZmQ4YTEwYTQxZmEyMmU1YzRlNGEwYzFjM2QwNxJHc2hhMjU2OmMwZGMyNmVjOTIwZGU3Mjk1NWUwNDRmZTk3ODAyYjhiOGY5YmI0YWUyYjcwMzQwMzM2MDdmYWViNGUxNDY3NjcaFFszLzNdIFJVTiBjYXQgL2EudHh0KgsIhrW92AYQ67zZLzIMCIe1vdgGEObB36AD'
    const trace = buildkitTrace()
    expect(trace(aux)).toEqual(['[3/3] RUN cat /a.txt'])
    expect(trace(aux)).toEqual([])
  })

  test('cached steps, errors and output lines', () => {
    const vertex = (digest: string, name: string, extra: Buffer[]) =>
      bytesField(1, Buffer.concat([bytesField(1, digest), bytesField(3, name), ...extra]))
    const done = bytesField(6, intField(1, 5))
    const log = bytesField(3, Buffer.concat([bytesField(1, 'd3'), bytesField(4, 'hello\nworld\n')]))
    const event = Buffer.concat([
      vertex('d1', '[1/3] FROM base', [intField(4, 1), done]),
      vertex('d2', '[2/3] RUN false', [bytesField(7, 'exit code: 1')]),
      vertex('d3', '[3/3] RUN echo', []),
      log
    ]).toString('base64')
    expect(buildkitTrace()(event)).toEqual([
      'CACHED [1/3] FROM base',
      'ERROR [2/3] RUN false: exit code: 1',
      '  hello',
      '  world'
    ])
  })

  test('hostile or broken progress is skipped, never thrown', () => {
    const trace = buildkitTrace()
    expect(trace('not base64 protobuf ###')).toEqual([])
    expect(trace(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]).toString('base64'))).toEqual([])
    expect(() => protoFields(Buffer.from([0x0b]))).toThrow(/wire type/)
  })
})

describe('fallback to the classic builder', () => {
  test('an engine that refuses the BuildKit request gets the classic build, said in the log', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-builder-'))
    fs.writeFileSync(path.join(dir, 'Dockerfile'), 'FROM scratch\n')
    // Enough files that the context streams are still reading when the build is decided.
    for (let i = 0; i < 2000; i++) fs.writeFileSync(path.join(dir, `f${i}.txt`), `${i}\n`)
    const versions: unknown[] = []
    const fake = {
      modem: {
        dial(opts: { options: { version?: string } }, cb: (e: unknown, s?: unknown) => void) {
          versions.push(opts.options.version)
          if (opts.options.version === '2')
            return cb(new Error('(HTTP code 400) buildkit not supported'))
          const s = new PassThrough()
          s.end('{"aux":{"ID":"sha256:' + 'c'.repeat(64) + '"}}\n')
          cb(null, s)
        },
        followProgress(
          stream: NodeJS.ReadableStream,
          done: (e: Error | null) => void,
          onEvent: (e: object) => void
        ) {
          let text = ''
          stream.on('data', (d: Buffer) => (text += d.toString()))
          stream.on('end', () => {
            for (const l of text.split('\n').filter(Boolean)) onEvent(JSON.parse(l) as object)
            done(null)
          })
        }
      }
    } as unknown as Docker
    const lines: string[] = []
    const made = await build(
      fake,
      {
        kind: 'build',
        dockerfile: path.join(dir, 'Dockerfile'),
        context: dir,
        buildArgs: {},
        allowUnpinnedBase: false
      },
      { info: (l) => lines.push(l) },
      {
        dockerfileText: Buffer.from('FROM scratch\n'),
        entries: await contextEntries(dir),
        inContext: true,
        key: 'k'.repeat(64)
      },
      { builder: 'buildkit', reason: 'test' }
    )
    expect(versions).toEqual(['2', undefined])
    expect(made).toEqual({ id: `sha256:${'c'.repeat(64)}`, builder: 'classic' })
    expect(lines.join('\n')).toMatch(/BuildKit refused the build .*400.*using the classic builder/)
    // The context streams (the refused BuildKit one, and the classic one this fake never reads)
    // must not fail later (an unhandled stream error would end the process): their files go away
    // under them here.
    fs.rmSync(dir, { recursive: true, force: true })
    await new Promise((r) => setTimeout(r, 300))
  }, 30_000)
})
