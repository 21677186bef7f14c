// The table of published preset images (images/published.json), as the release workflow writes it.
//
//   node scripts/published-images.mjs key PRESET
//       prints the key of the preset's build inputs (its Dockerfile, folder and pinned bases: the
//       key the action compares before it pulls instead of building)
//   node scripts/published-images.mjs write --version 1.2.3 --repository owner/name \
//       --image claude-code=ghcr.io/owner/name/claude-code@sha256:<index> \
//       --platform claude-code=linux/amd64@sha256:<manifest> --platform claude-code=linux/arm64@sha256:<manifest> ...
//       writes images/published.json (every preset's key computed here, the result checked by the
//       action's own parser); --out FILE writes elsewhere
//
// The keys are computed by the action's own code (src/sandbox/docker/image-cache.ts), bundled on
// the fly with esbuild, so the table and the action can never disagree on what a key covers.
import * as esbuild from 'esbuild'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { common } from './esbuild-options.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

export async function actionCode() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-published-'))
  const out = path.join(dir, 'published.mjs')
  await esbuild.build({
    ...common,
    stdin: {
      contents: [
        "export { imageInputsKey } from './src/sandbox/docker/image-cache.ts'",
        "export { parsePublished } from './src/presets/published.ts'",
        "export { PRESETS } from './src/presets/presets.ts'"
      ].join('\n'),
      resolveDir: root,
      loader: 'ts'
    },
    outfile: out,
    logLevel: 'error'
  })
  try {
    return await import(pathToFileURL(out).href)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** The key of a preset's build as the action plans it: its Dockerfile, its folder, no build args. */
export async function presetKey(code, preset, actionRoot = root) {
  const p = code.PRESETS[preset]
  if (p === undefined)
    throw new Error(`no preset ${preset}; presets: ${Object.keys(code.PRESETS).join(', ')}`)
  const dir = path.join(actionRoot, p.imageDir)
  const key = await code.imageInputsKey({
    kind: 'build',
    dockerfile: path.join(dir, 'Dockerfile'),
    context: dir,
    buildArgs: {},
    allowUnpinnedBase: false
  })
  if (key === undefined) throw new Error(`the ${preset} preset's Dockerfile has an unpinned base`)
  return key
}

const fail = (m) => {
  process.stderr.write(`published-images: ${m}\n`)
  process.exit(2)
}

async function main() {
  const [command, ...rest] = process.argv.slice(2)
  const code = await actionCode()
  if (command === 'key') {
    if (rest.length !== 1) fail('usage: key PRESET')
    process.stdout.write(`${await presetKey(code, rest[0])}\n`)
    return
  }
  if (command !== 'write')
    fail(
      'usage: key PRESET | write --version V --repository R --image P=NAME@DIGEST --platform P=OS/ARCH@DIGEST ...'
    )
  const { values } = parseArgs({
    args: rest,
    options: {
      version: { type: 'string' },
      repository: { type: 'string' },
      image: { type: 'string', multiple: true, default: [] },
      platform: { type: 'string', multiple: true, default: [] },
      out: { type: 'string', default: path.join(root, 'images', 'published.json') }
    }
  })
  const images = {}
  for (const i of values.image) {
    const m = /^([a-z0-9-]+)=([^@\s]+)@(sha256:[a-f0-9]{64})$/.exec(i)
    if (!m) fail(`--image ${i}: expected PRESET=NAME@sha256:<64 hex>`)
    images[m[1]] = {
      image: m[2],
      digest: m[3],
      platforms: {},
      inputsKey: await presetKey(code, m[1])
    }
  }
  for (const p of values.platform) {
    const m = /^([a-z0-9-]+)=(linux\/[a-z0-9]+)@(sha256:[a-f0-9]{64})$/.exec(p)
    if (!m) fail(`--platform ${p}: expected PRESET=linux/ARCH@sha256:<64 hex>`)
    if (images[m[1]] === undefined) fail(`--platform ${p}: no --image for ${m[1]}`)
    images[m[1]].platforms[m[2]] = m[3]
  }
  try {
    const text = await writeTable(code, {
      version: values.version ?? null,
      repository: values.repository ?? null,
      images,
      out: values.out
    })
    process.stdout.write(
      `wrote ${path.relative(process.cwd(), values.out) || values.out}: ${Object.keys(images).join(', ') || 'no images'} (${text.length} bytes)\n`
    )
  } catch (error) {
    fail(error.message)
  }
}

/**
 * Writes the table to `out` after the action's own parser accepted it; returns the text.
 * `images`: preset → {image, digest, platforms, inputsKey}.
 */
export async function writeTable(code, { version, repository, images, out }) {
  const table = {
    comment:
      'The preset images published for this commit of Agent Airlock (written by the release workflow, .github/workflows/release.yml). The action pulls a preset image by its digest when the preset folder is the one it was built from (inputsKey); otherwise it builds it from images/agents/<preset>/.',
    version,
    repository,
    images
  }
  const text = `${JSON.stringify(table, null, 2)}\n`
  code.parsePublished(text)
  fs.writeFileSync(out, text)
  return text
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await main()
