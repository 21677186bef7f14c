// The build provenance of a published preset image, checked as `gh attestation verify` checks it:
// the attestations GitHub stores for the image's digest, their Sigstore bundles verified against
// Sigstore's trusted root, signed by the release workflow of the repository that published it.
// Where the runner has no GitHub CLI or no token, the check is skipped and the report says why; an
// image whose attestation the CLI refuses is never used.
import { execFile } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { InfrastructureError } from '../errors.js'

export interface AttestationResult {
  status: 'verified' | 'skipped'
  detail: string
}

export interface AttestationTarget {
  /** name@sha256:… of the multi-platform index. */
  ref: string
  /** owner/name whose release workflow built it. */
  repository: string
}

/** The workflow that signs the images' provenance (.github/workflows/release.yml). */
export const RELEASE_WORKFLOW = '.github/workflows/release.yml'

/** The refusal of an image whose provenance the GitHub CLI does not verify. */
export class AttestationRefused extends InfrastructureError {
  constructor(ref: string, detail: string) {
    super(
      `the build provenance of ${ref} did not verify (gh attestation verify: ${detail}); the image is refused. It was not built by the release workflow it claims`
    )
    this.name = 'AttestationRefused'
  }
}

// What the CLI says when it could not ask, rather than when the answer was no.
const CANNOT_ASK =
  /HTTP 401|HTTP 403|authentication|gh auth login|GH_TOKEN|could not resolve|connection refused|no such host|timeout|i\/o timeout|dial tcp|TLS handshake|rate limit/i

function onPath(name: string, envPath: string | undefined): string | undefined {
  for (const dir of (envPath ?? '').split(path.delimiter)) {
    if (dir === '') continue
    const candidate = path.join(dir, name)
    try {
      fs.accessSync(candidate, fs.constants.X_OK)
      return candidate
    } catch {
      // not here
    }
  }
  return undefined
}

/**
 * Runs `gh attestation verify oci://<ref> --repo <repository> --signer-workflow
 * <repository>/.github/workflows/release.yml`. Verified on exit 0; skipped (with why) when the
 * CLI is missing, has no token, or cannot reach GitHub; refused (throws) when it answers no.
 */
export async function verifyAttestation(
  target: AttestationTarget,
  options: { env: NodeJS.ProcessEnv; token?: string; timeoutMs?: number }
): Promise<AttestationResult> {
  const gh = onPath('gh', options.env.PATH)
  if (gh === undefined)
    return { status: 'skipped', detail: 'the GitHub CLI (gh) is not on this runner' }
  const token = options.token ?? options.env.GH_TOKEN ?? options.env.GITHUB_TOKEN
  const args = [
    'attestation',
    'verify',
    `oci://${target.ref}`,
    '--repo',
    target.repository,
    '--signer-workflow',
    `${target.repository}/${RELEASE_WORKFLOW}`
  ]
  const env: NodeJS.ProcessEnv = {
    PATH: options.env.PATH,
    HOME: options.env.HOME,
    ...(options.env.DOCKER_CONFIG !== undefined
      ? { DOCKER_CONFIG: options.env.DOCKER_CONFIG }
      : {}),
    ...(token !== undefined && token !== '' ? { GH_TOKEN: token } : {}),
    GH_PROMPT_DISABLED: '1',
    NO_COLOR: '1'
  }
  const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(
      gh,
      args,
      { env, timeout: options.timeoutMs ?? 120_000, maxBuffer: 4 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null
        resolve({ code, output: `${stdout}\n${stderr}`.trim() })
      }
    )
  })
  const last = lastLines(result.output)
  if (result.code === 0)
    return {
      status: 'verified',
      detail: `signed by ${target.repository}/${RELEASE_WORKFLOW} (gh attestation verify)`
    }
  if (result.code === null || CANNOT_ASK.test(result.output))
    return { status: 'skipped', detail: `the GitHub CLI could not check it: ${last}` }
  throw new AttestationRefused(target.ref, last)
}

function lastLines(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '')
  return lines.slice(-3).join(' / ').slice(0, 1000) || 'no output'
}
