// The lockfiles across the install and the agent: their hashes before and after the install, and
// after the agent; and what the record says about them (pure).
import type { DependencyFile } from './metadata.js'
import type { PolicyFinding } from './path-policy.js'

/** One lockfile's SHA-256 before the install, after it, and after the agent (null: absent). */
export interface LockfileHashes {
  path: string
  beforeSetup: string | null
  afterSetup: string | null
  afterAgent: string | null
}

/** The hashes before and after the install, one entry per path either side has. */
export function mergeHashes(before: DependencyFile[], after: DependencyFile[]): LockfileHashes[] {
  const paths = [...new Set([...before, ...after].map((d) => d.path))].sort()
  const get = (list: DependencyFile[], p: string): string | null =>
    list.find((d) => d.path === p)?.sha256 ?? null
  return paths.map((p) => ({
    path: p,
    beforeSetup: get(before, p),
    afterSetup: get(after, p),
    afterAgent: null
  }))
}

/**
 * The lockfile record completed with the hashes after the agent, and the findings: lockfiles the
 * agent changed, and what the install changed (it shows in the diff, but it was not the agent).
 */
export function lockfileFindings(
  setup: { lockfiles: LockfileHashes[]; changedFiles: string[]; changedTotal: number },
  afterAgent: DependencyFile[]
): { lockfiles: LockfileHashes[]; findings: PolicyFinding[] } {
  const lockfiles = setup.lockfiles.map((l) => ({ ...l }))
  for (const d of afterAgent) {
    let rec = lockfiles.find((l) => l.path === d.path)
    if (!rec) {
      rec = { path: d.path, beforeSetup: null, afterSetup: null, afterAgent: null }
      lockfiles.push(rec)
    }
    rec.afterAgent = d.sha256
  }
  const findings: PolicyFinding[] = []
  for (const l of lockfiles) {
    if (l.afterAgent !== l.afterSetup)
      findings.push({
        rule: 'lockfile-changed',
        path: l.path,
        detail: `the agent changed this lockfile after the install phase (sha256 ${short(l.afterSetup)} → ${short(l.afterAgent)}); the tests ran with dependencies the install did not resolve`
      })
  }
  for (const f of setup.changedFiles)
    findings.push({
      rule: 'setup-changed',
      path: f,
      detail: 'changed by the install phase (setup-command), not by the agent; it is in the diff'
    })
  if (setup.changedTotal > setup.changedFiles.length)
    findings.push({
      rule: 'setup-changed',
      path: null,
      detail: `…and ${setup.changedTotal - setup.changedFiles.length} more files the install phase changed`
    })
  return { lockfiles, findings }
}

function short(h: string | null): string {
  return h === null ? 'absent' : h.slice(0, 12)
}
