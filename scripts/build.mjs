// Bundles the action (dist/index.js, dist/post.js) and the CLI (dist/cli.js) with every
// dependency, so the action runs without node_modules.
import * as esbuild from 'esbuild'
import { chmod, rm } from 'node:fs/promises'

/** Native addons (ssh2's optional crypto, cpu-features) are optional: bundle a stub that throws. */
const nativeStub = {
  name: 'native-stub',
  setup(build) {
    build.onResolve({ filter: /\.node$|^cpu-features$/ }, (args) => ({
      path: args.path,
      namespace: 'native-stub'
    }))
    build.onLoad({ filter: /.*/, namespace: 'native-stub' }, () => ({
      contents: 'throw new Error("native addon not bundled")',
      loader: 'js'
    }))
  }
}

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [nativeStub],
  // CommonJS dependencies call require() for Node built-ins; give the ESM bundle one.
  banner: {
    js: [
      "import { createRequire as __airlockCreateRequire } from 'node:module';",
      "import { fileURLToPath as __airlockFileURLToPath } from 'node:url';",
      "import { dirname as __airlockDirname } from 'node:path';",
      'const require = __airlockCreateRequire(import.meta.url);',
      'const __filename = __airlockFileURLToPath(import.meta.url);',
      'const __dirname = __airlockDirname(__filename);'
    ].join(' ')
  }
}

await rm('dist', { recursive: true, force: true })
await esbuild.build({
  ...common,
  entryPoints: { index: 'src/index.ts', post: 'src/post.ts' },
  outdir: 'dist'
})
await esbuild.build({
  ...common,
  entryPoints: { cli: 'src/bin.ts' },
  outdir: 'dist',
  banner: { js: '#!/usr/bin/env node\n' + common.banner.js }
})
await chmod('dist/cli.js', 0o755)
// The egress proxy (dist/proxy.cjs) runs in its own container (proxy-image, node 18 or later): one file, no
// dependencies, mounted read-only.
await esbuild.build({
  ...common,
  entryPoints: { proxy: 'src/egress/proxy-main.ts' },
  outdir: 'dist',
  target: 'node18',
  // CommonJS in a .cjs file: run on its own, inside or outside this package's "type": "module".
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  banner: {}
})
