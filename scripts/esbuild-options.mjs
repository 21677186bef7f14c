// esbuild settings shared by the action/CLI bundle (build.mjs) and the benchmark bundle (bench.mjs).

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

export const common = {
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
