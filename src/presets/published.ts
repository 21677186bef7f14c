// The preset images a release published (images/published.json, written by the release
// workflow): per preset, the image pulled by the digest of its multi-platform index, the digest of
// each platform's manifest, and the key of the build inputs it was made from (the same key the
// image cache uses), so a checkout whose preset folder differs from the release builds instead.
// Read from the action's own checkout (the commit the workflow pins); still checked field by field.
import * as fs from 'node:fs'
import * as path from 'node:path'
import { ConfigurationError } from '../errors.js'

export const PUBLISHED_FILE = path.join('images', 'published.json')

/** One preset's published image, as the plan carries it. */
export interface PublishedImage {
  /** The image's name without tag or digest, e.g. ghcr.io/owner/agent-airlock/claude-code. */
  image: string
  /** The digest of the multi-platform index (what is pulled). */
  digest: string
  /** The digest of each platform's image manifest, e.g. linux/amd64. */
  platforms: Record<string, string>
  /** The key of the build inputs (Dockerfile, build args, bases, context) the image was built from. */
  inputsKey: string
  /** The release that published it (semver, no leading v). */
  version: string
  /** The repository whose release workflow built it (owner/name): whose attestation to expect. */
  repository: string
}

export interface PublishedTable {
  version: string | null
  repository: string | null
  images: Record<string, Omit<PublishedImage, 'version' | 'repository'>>
}

const DIGEST = /^sha256:[a-f0-9]{64}$/
const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/
const REPOSITORY = /^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/
// A registry host (with an optional port), then lowercase path components; no tag, no digest.
const IMAGE = /^[a-z0-9.-]+(:\d+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)+$/
const PLATFORM = /^linux\/(amd64|arm64)$/
const HEX64 = /^[a-f0-9]{64}$/

const bad = (what: string): ConfigurationError =>
  new ConfigurationError(
    'agent',
    `${PUBLISHED_FILE} of this Agent Airlock checkout is invalid: ${what} (the release workflow writes it; restore it from the release commit)`
  )

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** Checks the table's shape; throws a ConfigurationError naming the field. */
export function parsePublished(text: string): PublishedTable {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (error) {
    throw bad(`not JSON (${(error as Error).message})`)
  }
  if (!isRecord(raw)) throw bad('not an object')
  const { version, repository, images } = raw
  if (version !== null && (typeof version !== 'string' || !SEMVER.test(version)))
    throw bad('version must be a semver version (1.2.3) or null')
  if (repository !== null && (typeof repository !== 'string' || !REPOSITORY.test(repository)))
    throw bad('repository must be owner/name or null')
  if (!isRecord(images)) throw bad('images must be an object')
  if (Object.keys(images).length > 0 && (version === null || repository === null))
    throw bad('images are listed without the version and repository that published them')
  const out: PublishedTable['images'] = {}
  for (const [preset, entry] of Object.entries(images)) {
    if (!isRecord(entry)) throw bad(`images.${preset} must be an object`)
    const { image, digest, platforms, inputsKey } = entry
    if (typeof image !== 'string' || !IMAGE.test(image))
      throw bad(`images.${preset}.image must be a registry/name without tag or digest`)
    if (typeof digest !== 'string' || !DIGEST.test(digest))
      throw bad(`images.${preset}.digest must be sha256:<64 hex digits>`)
    if (typeof inputsKey !== 'string' || !HEX64.test(inputsKey))
      throw bad(`images.${preset}.inputsKey must be 64 hex digits`)
    if (!isRecord(platforms) || Object.keys(platforms).length === 0)
      throw bad(`images.${preset}.platforms must name each platform's digest`)
    const plats: Record<string, string> = {}
    for (const [p, d] of Object.entries(platforms)) {
      if (!PLATFORM.test(p))
        throw bad(`images.${preset}.platforms: "${p}" is not linux/amd64 or linux/arm64`)
      if (typeof d !== 'string' || !DIGEST.test(d))
        throw bad(`images.${preset}.platforms.${p} must be sha256:<64 hex digits>`)
      plats[p] = d
    }
    out[preset] = { image, digest, platforms: plats, inputsKey }
  }
  return {
    version: version,
    repository: repository,
    images: out
  }
}

/** The table of the action's checkout at `root`; a missing file is an empty table. */
export function readPublished(root: string): PublishedTable {
  let text: string
  try {
    text = fs.readFileSync(path.join(root, PUBLISHED_FILE), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      return { version: null, repository: null, images: {} }
    throw error
  }
  return parsePublished(text)
}

/** The published image of `preset`, or undefined (an unreleased checkout, or not published). */
export function publishedImageFor(
  table: PublishedTable,
  preset: string
): PublishedImage | undefined {
  const entry = table.images[preset]
  if (entry === undefined || table.version === null || table.repository === null) return undefined
  return { ...entry, version: table.version, repository: table.repository }
}
