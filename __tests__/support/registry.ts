// An image on the tests' loopback registry (Debian's docker-registry, started by
// scripts/docker-registry.mjs): pushed and read back by its digest, then forgotten by the engine
// so that a run has to pull it.
import { execFileSync } from 'node:child_process'

/** Pushes `<repo>:1` (tagged from `source` first, when given); answers `<repo>@sha256:…`. */
export function pushForDigest(repo: string, source?: string): string {
  if (source !== undefined) execFileSync('docker', ['tag', source, `${repo}:1`])
  execFileSync('docker', ['push', '-q', `${repo}:1`], { stdio: 'pipe' })
  const digests = execFileSync('docker', [
    'image',
    'inspect',
    '-f',
    '{{range .RepoDigests}}{{println .}}{{end}}',
    `${repo}:1`
  ]).toString()
  const pinned = digests.split('\n').find((d) => d.startsWith(`${repo}@sha256:`))
  if (pinned === undefined) throw new Error(`${repo}:1 has no digest after its push`)
  return pinned
}

/** Whether the engine has an image by this reference. */
export function hasImage(ref: string): boolean {
  try {
    execFileSync('docker', ['image', 'inspect', ref], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** The engine forgets `<repo>:1` and `pinned`: a run that names `pinned` has to pull it. */
export function forgetPushed(repo: string, pinned: string): void {
  execFileSync('docker', ['rmi', `${repo}:1`], { stdio: 'pipe' })
  if (hasImage(pinned)) execFileSync('docker', ['rmi', pinned], { stdio: 'pipe' })
}
