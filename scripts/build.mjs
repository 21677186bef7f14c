// Bundles the action (dist/index.js with dist/main.js, dist/post.js) and the CLI (dist/cli.js with
// dist/cli-main.js) with every dependency, so the action runs without node_modules.
// Usage: node scripts/build.mjs [OUTDIR]   (default dist; tests bundle into a temporary folder)
import * as esbuild from 'esbuild'
import { chmod, rm, stat } from 'node:fs/promises'
import { POST_BUNDLE_MAX_BYTES, buildCli, common, post, separateFile } from './esbuild-options.mjs'
import { join } from 'node:path'

const outdir = process.argv[2] ?? 'dist'

await rm(outdir, { recursive: true, force: true })
// The main step: index.js turns on Node's compile cache, then loads main.js (the step itself).
await esbuild.build({ ...common, entryPoints: { main: 'src/main.ts' }, outdir })
await esbuild.build({
  ...common,
  entryPoints: { index: 'src/index.ts' },
  outdir,
  plugins: [separateFile('./main.js', './main.js')],
  banner: {}
})
await esbuild.build({ ...post, outdir })
// The cleanup step runs after every job, also after a crash: it must stay small (only cleanup).
const postBytes = (await stat(join(outdir, 'post.js'))).size
if (postBytes > POST_BUNDLE_MAX_BYTES) {
  console.error(
    `[build] ${join(outdir, 'post.js')} is ${postBytes} bytes, over its budget of ${POST_BUNDLE_MAX_BYTES}: src/post.ts must import only the cleanup (src/sandbox/cleanup.ts, src/workspace/temp.ts, src/state.ts), never src/main.ts or dockerode`
  )
  process.exit(1)
}
await buildCli(esbuild, outdir)
await chmod(join(outdir, 'cli.js'), 0o755)
// The egress proxy (dist/proxy.cjs) runs in its own container (proxy-image, node 18 or later): one file, no
// dependencies, mounted read-only.
await esbuild.build({
  ...common,
  entryPoints: { proxy: 'src/egress/proxy-main.ts' },
  outdir,
  target: 'node18',
  // CommonJS in a .cjs file: run on its own, inside or outside this package's "type": "module".
  format: 'cjs',
  // No dockerode in this bundle: only the native-addon stub applies.
  plugins: common.plugins.filter((p) => p.name !== 'lazy-modules'),
  outExtension: { '.js': '.cjs' },
  banner: {}
})
