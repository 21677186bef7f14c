// The release workflow's own logic (.github/workflows/release.yml), one subcommand per step, so the
// workflow's run: steps stay one line each and the logic is tested where it runs:
//
//   node scripts/release.mjs check VERSION
//       VERSION is semver (no leading v), package.json has it, CHANGELOG.md has a section for it
//   node scripts/release.mjs image-record --preset P --image NAME --digest sha256:… [--platforms LIST]
//       reads the image's multi-platform index from its registry (by digest, the bytes checked
//       against it) and prints the record the table is written from: each platform's digest
//   node scripts/release.mjs keys
//       prints the key of each preset's build inputs as JSON (the action's own code computes them:
//       scripts/published-images.mjs, which needs the dev dependencies; the check job runs it)
//   node scripts/release.mjs table --version V --repository OWNER/NAME --records DIR --keys JSON
//       writes images/published.json from the records and the keys
//   node scripts/release.mjs notes --version V --records DIR
//       the release notes: the CHANGELOG section and the images by digest
//   node scripts/release.mjs github-release --version V --notes FILE --commit SHA
//       creates the GitHub release of tag vV (GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_TOKEN)
//   node scripts/release.mjs release-json --version V --repository OWNER/NAME --commit SHA
//       writes release.json for the npm package (what `airlock init` pins)
import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/
const DIGEST = /^sha256:[a-f0-9]{64}$/
const PRESETS = ['claude-code', 'codex', 'gemini-cli']

class ReleaseError extends Error {}
const fail = (m) => {
  throw new ReleaseError(m)
}

/** The CHANGELOG.md section of `version` (its text, without the heading), or undefined. */
export function changelogSection(text, version) {
  const lines = text.split('\n')
  const start = lines.findIndex((l) => l.startsWith(`## [${version}]`))
  if (start < 0) return undefined
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '))
  return lines
    .slice(start + 1, end < 0 ? undefined : end)
    .join('\n')
    .trim()
}

export function check(version, dir = root) {
  if (!SEMVER.test(version ?? ''))
    fail(`version "${version}" is not semver (1.2.3 or 1.2.3-rc.1, without a leading v)`)
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'))
  if (pkg.version !== version)
    fail(
      `package.json says ${pkg.version}, not ${version}: bump it (npm version ${version} --no-git-tag-version) and commit`
    )
  const section = changelogSection(fs.readFileSync(path.join(dir, 'CHANGELOG.md'), 'utf8'), version)
  if (section === undefined || section === '')
    fail(`CHANGELOG.md has no section "## [${version}]" with the release's notes`)
  return section
}

/**
 * The index of `image@digest` from its registry (the Docker Registry HTTP API): anonymous, or
 * with a bearer token from the registry's token service when it asks (ghcr.io does, with the
 * workflow's token as the password).
 */
async function fetchIndex(image, digest, env) {
  const slash = image.indexOf('/')
  const host = image.slice(0, slash)
  const name = image.slice(slash + 1)
  const base = env.AIRLOCK_RELEASE_REGISTRY_URL ?? `https://${host}`
  const url = `${base}/v2/${name}/manifests/${digest}`
  const accept = [
    'application/vnd.oci.image.index.v1+json',
    'application/vnd.docker.distribution.manifest.list.v2+json'
  ].join(', ')
  let res = await fetch(url, { headers: { accept } })
  if (res.status === 401) {
    const challenge = res.headers.get('www-authenticate') ?? ''
    const realm = /realm="([^"]+)"/.exec(challenge)?.[1]
    const service = /service="([^"]+)"/.exec(challenge)?.[1]
    if (realm === undefined)
      fail(`${image}: the registry refused the read and named no token service`)
    const tokenUrl = new URL(realm)
    if (service !== undefined) tokenUrl.searchParams.set('service', service)
    tokenUrl.searchParams.set('scope', `repository:${name}:pull`)
    const auth =
      env.GITHUB_TOKEN !== undefined
        ? {
            authorization: `Basic ${Buffer.from(`${env.GITHUB_ACTOR ?? 'x'}:${env.GITHUB_TOKEN}`).toString('base64')}`
          }
        : {}
    const t = await fetch(tokenUrl, { headers: auth })
    if (!t.ok) fail(`${image}: the registry's token service answered ${t.status}`)
    const { token, access_token: accessToken } = await t.json()
    res = await fetch(url, { headers: { accept, authorization: `Bearer ${token ?? accessToken}` } })
  }
  if (!res.ok) fail(`${image}@${digest}: the registry answered ${res.status}`)
  const body = Buffer.from(await res.arrayBuffer())
  const got = `sha256:${createHash('sha256').update(body).digest('hex')}`
  if (got !== digest) fail(`${image}@${digest}: the registry served bytes whose digest is ${got}`)
  return JSON.parse(body.toString('utf8'))
}

export async function imageRecord({ preset, image, digest, platforms }, env = process.env) {
  if (!PRESETS.includes(preset)) fail(`--preset ${preset}: not one of ${PRESETS.join(', ')}`)
  if (!DIGEST.test(digest ?? '')) fail(`--digest ${digest}: not sha256:<64 hex digits>`)
  if (!/^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._-]+)+$/.test(image ?? ''))
    fail(`--image ${image}: not registry/name without tag or digest`)
  const index = await fetchIndex(image, digest, env)
  if (!Array.isArray(index.manifests)) fail(`${image}@${digest} is not a multi-platform index`)
  const found = {}
  for (const m of index.manifests) {
    const p = m.platform
    // Attestation manifests (SBOM, provenance) are listed as unknown/unknown: not an image.
    if (p === undefined || p.os === 'unknown') continue
    found[`${p.os}/${p.architecture}`] = m.digest
  }
  const wanted = platforms.split(',')
  for (const w of wanted) if (found[w] === undefined) fail(`${image}@${digest} has no ${w} image`)
  return {
    preset,
    image,
    digest,
    platforms: Object.fromEntries(wanted.map((w) => [w, found[w]]))
  }
}

function readRecords(dir) {
  const records = fs
    .readdirSync(dir, { recursive: true })
    .filter((f) => String(f).endsWith('.json'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, String(f)), 'utf8')))
  const presets = records.map((r) => r.preset).sort()
  if (JSON.stringify(presets) !== JSON.stringify([...PRESETS].sort()))
    fail(
      `the records name ${presets.join(', ') || 'no preset'}; a release publishes ${PRESETS.join(', ')}`
    )
  return records
}

/** The keys of the presets' build inputs, as the check job computed them (published-images.mjs key). */
function parseKeys(raw) {
  let keys
  try {
    keys = JSON.parse(raw ?? '')
  } catch {
    fail('--keys: not JSON ({"claude-code": "<64 hex>", ...})')
  }
  for (const p of PRESETS)
    if (!/^[a-f0-9]{64}$/.test(keys?.[p] ?? '')) fail(`--keys: no key of 64 hex digits for ${p}`)
  return keys
}

export function table({ version, repository, records, keys, out }, dir = root) {
  if (!SEMVER.test(version ?? '')) fail(`--version ${version}: not semver`)
  if (!/^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/.test(repository ?? ''))
    fail(`--repository ${repository}: not owner/name`)
  const k = parseKeys(keys)
  const images = {}
  for (const r of readRecords(records)) {
    if (!DIGEST.test(r.digest) || Object.values(r.platforms).some((d) => !DIGEST.test(d)))
      fail(`the record of ${r.preset} holds a digest that is not sha256:<64 hex digits>`)
    images[r.preset] = {
      image: r.image,
      digest: r.digest,
      platforms: r.platforms,
      inputsKey: k[r.preset]
    }
  }
  const text = `${JSON.stringify(
    {
      comment:
        'The preset images published for this commit of Agent Airlock (written by the release workflow, .github/workflows/release.yml). The action pulls a preset image by its digest when the preset folder is the one it was built from (inputsKey); otherwise it builds it from images/agents/<preset>/.',
      version,
      repository,
      images
    },
    null,
    2
  )}\n`
  fs.writeFileSync(out ?? path.join(dir, 'images', 'published.json'), text)
  return text
}

export function notes({ version, records }, dir = root) {
  const section = check(version, dir)
  const rows = readRecords(records)
    .sort((a, b) => a.preset.localeCompare(b.preset))
    .map(
      (r) =>
        `| \`${r.preset}\` | \`${r.image}@${r.digest}\` | ${Object.keys(r.platforms).join(', ')} |`
    )
  return [
    section,
    '',
    '### Preset images',
    '',
    'Pulled by digest by the action at this release (`images/published.json`); each carries build provenance (`gh attestation verify oci://<image>@<digest> --repo <this repository>`) and an SBOM.',
    '',
    '| preset | image | platforms |',
    '| --- | --- | --- |',
    ...rows,
    ''
  ].join('\n')
}

export async function githubRelease({ version, notesFile, commit }, env = process.env) {
  for (const k of ['GITHUB_API_URL', 'GITHUB_REPOSITORY', 'GITHUB_TOKEN'])
    if ((env[k] ?? '') === '') fail(`${k} is not set`)
  const res = await fetch(
    `${env.GITHUB_API_URL.replace(/\/$/, '')}/repos/${env.GITHUB_REPOSITORY}/releases`,
    {
      method: 'POST',
      headers: {
        authorization: `Bearer ${env.GITHUB_TOKEN}`,
        accept: 'application/vnd.github+json',
        'content-type': 'application/json',
        'x-github-api-version': '2022-11-28'
      },
      body: JSON.stringify({
        tag_name: `v${version}`,
        target_commitish: commit,
        name: `v${version}`,
        body: fs.readFileSync(notesFile, 'utf8'),
        prerelease: version.includes('-'),
        make_latest: version.includes('-') ? 'false' : 'true'
      })
    }
  )
  if (!res.ok) fail(`creating the release v${version}: ${res.status} ${await res.text()}`)
  return (await res.json()).html_url
}

async function main() {
  const [command, ...rest] = process.argv.slice(2)
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      version: { type: 'string' },
      repository: { type: 'string' },
      records: { type: 'string' },
      preset: { type: 'string' },
      image: { type: 'string' },
      digest: { type: 'string' },
      platforms: { type: 'string', default: 'linux/amd64,linux/arm64' },
      notes: { type: 'string' },
      commit: { type: 'string' },
      keys: { type: 'string' },
      out: { type: 'string' }
    }
  })
  switch (command) {
    case 'check':
      check(positionals[0])
      process.stdout.write(`release ${positionals[0]}: package.json and CHANGELOG.md agree\n`)
      return
    case 'keys': {
      const { actionCode, presetKey } = await import('./published-images.mjs')
      const code = await actionCode()
      const keys = {}
      for (const p of PRESETS) keys[p] = await presetKey(code, p)
      process.stdout.write(`${JSON.stringify(keys)}\n`)
      return
    }
    case 'image-record':
      process.stdout.write(`${JSON.stringify(await imageRecord(values))}\n`)
      return
    case 'table':
      table(values)
      process.stdout.write(`wrote images/published.json for ${values.version}\n`)
      return
    case 'notes':
      process.stdout.write(notes(values))
      return
    case 'github-release':
      process.stdout.write(
        `${await githubRelease({ version: values.version, notesFile: values.notes, commit: values.commit })}\n`
      )
      return
    case 'release-json': {
      if (!/^[0-9a-f]{40}$/.test(values.commit ?? '')) fail('--commit: not a full commit SHA')
      const json = {
        repository: values.repository,
        tag: `v${values.version}`,
        commit: values.commit
      }
      fs.writeFileSync(path.join(root, 'release.json'), `${JSON.stringify(json, null, 2)}\n`)
      process.stdout.write(`wrote release.json: ${json.repository} ${json.tag} ${json.commit}\n`)
      return
    }
    default:
      fail(
        'usage: check | image-record | table | notes | github-release | release-json (see the head of scripts/release.mjs)'
      )
  }
}

if (
  process.argv[1] !== undefined &&
  import.meta.url === new URL(`file://${path.resolve(process.argv[1])}`).href
) {
  try {
    await main()
  } catch (error) {
    process.stderr.write(
      `release: ${error instanceof ReleaseError ? error.message : error.stack}\n`
    )
    process.exit(error instanceof ReleaseError ? 2 : 1)
  }
}
