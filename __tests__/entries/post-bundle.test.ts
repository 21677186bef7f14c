// The action's cleanup step (runs.post) is bundled on its own: it must carry only the cleanup,
// never the product. Bundles src/post.ts with the build's options and reads esbuild's metafile.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import * as esbuild from 'esbuild'
// @ts-expect-error -- a plain .mjs module of the build, without types
import { POST_BUNDLE_MAX_BYTES, post } from '../../scripts/esbuild-options.mjs'

const ROOT = path.resolve('.')

describe('the post step bundle', () => {
  let out: string
  let meta: esbuild.Metafile
  let bytes: number

  beforeAll(async () => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-post-bundle-'))
    const result = await esbuild.build({
      ...(post as esbuild.BuildOptions),
      entryPoints: { post: path.join(ROOT, 'src/post.ts') },
      outdir: out,
      metafile: true,
      logLevel: 'silent'
    })
    meta = result.metafile
    bytes = fs.statSync(path.join(out, 'post.js')).size
  }, 60_000)

  afterAll(() => fs.rmSync(out, { recursive: true, force: true }))

  test('stays under the budget', () => {
    expect(POST_BUNDLE_MAX_BYTES).toBe(1024 * 1024)
    expect(bytes).toBeLessThan(POST_BUNDLE_MAX_BYTES)
  })

  test('holds no engine library, no main step and no pipeline', () => {
    const inputs = Object.keys(meta.inputs)
    const offending = inputs.filter((f) =>
      /node_modules\/(dockerode|docker-modem|ssh2|@grpc|protobufjs|@actions\/(artifact|github|cache|attest))\/|src\/(main|plan|pipeline\/)/.test(
        f
      )
    )
    expect(offending).toEqual([])
  })
})
