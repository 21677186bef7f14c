// Diff capture: the agent's tree snapshotted host side, diffed against the base, masked for
// secrets, checked against the path policy; every limit hit becomes a policy violation.
import * as fs from 'node:fs'
import { sha256 } from '../plan.js'
import type { RunPlan } from '../plan.js'
import { diffTrees, isSourcePath } from './diff.js'
import type { ChangedFile } from './diff.js'
import { hashLockfiles } from './metadata.js'
import type { DependencyFile } from './metadata.js'
import { gitBlobReader } from './blobs.js'
import { checkPolicy } from './path-policy.js'
import type { PolicyFinding } from './path-policy.js'
import type { Redactor } from '../redact.js'
import { scanDiff } from './secrets.js'
import { baseIgnoreRules, ignoreFindings } from './ignore.js'
import { MAX_PATH_BYTES, MAX_PATH_DEPTH, snapshotWorkspace } from './snapshot.js'
import { treePathProblem } from '../git-path.js'
import type { IgnoredEntry, SkippedEntry } from './snapshot.js'
import type { StatRecord } from '../workspace/stat-record.js'

/** The captured diff (report.json's `diff`). */
export interface DiffRecord {
  sha256: string
  bytes: number
  /** At most max-changed-files entries; `totalFiles` counts all. */
  files: ChangedFile[]
  totalFiles: number
  /** Files whose section is in diff.patch. */
  filesInPatch: number
  truncated: boolean
  /** Why the diff or the file list was cut (empty when nothing was). */
  truncation: string[]
  /** Secret values were found in the change and masked in diff.patch. */
  redacted: boolean
  skipped: SkippedEntry[]
  /**
   * Paths left out of the diff and the snapshot limits as build output: what the base tree's
   * `.gitignore` rules ignore (the top-most entries, at most 1000 listed; `total` counts all).
   */
  ignored: { total: number; entries: IgnoredEntry[] }
  /** git tree ids before and after the agent (in the run's private repository). */
  baseTree: string
  resultTree: string
}

export interface DiffCapture {
  diff: DiffRecord
  /** diff.patch's bytes as written (secrets masked): what the threat review reads. */
  patch: Buffer
  violations: PolicyFinding[]
  protected: PolicyFinding[]
  dependencies: DependencyFile[]
  /** Lines for the log: what was not taken, what was cut. */
  warnings: string[]
  /** Files the snapshot read, and those it took unchanged from the workspace's stat record. */
  snapshot: { read: number; reused: number }
}

/** Snapshots `ws.dir`, writes the (masked) patch to `patchFile`, and checks the policy. */
export async function captureDiff(
  ws: { dir: string; gitDir: string; tree: string; stats?: StatRecord },
  policy: RunPlan['policy'],
  redactor: Redactor,
  patchFile: string
): Promise<DiffCapture> {
  // Tool and build output: what the base tree's .gitignore and the default list ignore is left
  // out (never the agent's rules).
  const listing = ws.stats?.tree === ws.tree ? ws.stats.listing : undefined
  const rules = await baseIgnoreRules(ws.gitDir, ws.tree, listing)
  const snap = await snapshotWorkspace(ws.dir, ws.gitDir, undefined, ws.tree, rules, ws.stats)
  const diff = await diffTrees(ws.gitDir, ws.tree, snap.tree, policy)
  // Secrets in the change (the run's values, token shapes) are masked in the patch and flagged
  // below, one violation per file and rule; what the scan finds joins `redactor`.
  const secretScan = await scanDiff(diff.patch, redactor)
  const patch = secretScan.patch
  const redacted = !patch.equals(diff.patch)
  await fs.promises.writeFile(patchFile, patch)
  const truncation = [...diff.truncation]
  if (snap.truncated)
    truncation.push(
      `the workspace snapshot stopped at its limits: ${snap.skipped.filter((x) => x.reason === 'limit').length} file(s) not taken`
    )
  const checked = await checkPolicy(
    { allowed: policy.allowedPaths, protected: policy.protectedPaths },
    // Every changed file, also beyond max-changed-files.
    diff.all.files,
    diff.all.blobs,
    gitBlobReader(ws.gitDir)
  )
  const violations = [...checked.violations]
  const limit = (rule: string, detail: string): void => {
    violations.push({ rule, path: null, detail })
  }
  if (diff.totalFiles > policy.maxChangedFiles)
    limit(
      'max-changed-files',
      `${diff.totalFiles} files changed (max-changed-files: ${policy.maxChangedFiles})`
    )
  if (diff.filesInPatch < diff.totalFiles)
    limit(
      'max-diff-bytes',
      `diff.patch holds ${diff.filesInPatch} of ${diff.totalFiles} files (max-diff-bytes: ${policy.maxDiffBytes})`
    )
  const tooDeep = snap.skipped.filter((x) => x.reason === 'path-limit').length
  if (tooDeep > 0)
    limit(
      'path-limit',
      `${tooDeep} path(s) deeper than ${MAX_PATH_DEPTH} folders or longer than ${MAX_PATH_BYTES} bytes were not taken`
    )
  // A NUL byte makes git call a source file binary: shown as text in the patch, and flagged.
  const hiddenSource = diff.all.files
    .filter((f) => f.binary && f.status !== 'deleted' && isSourcePath(f.path))
    .map((f) => ({
      rule: 'binary-source',
      path: f.path,
      detail: `${f.status}; git reads this source path as binary (a NUL byte or the like): shown as text, NULs made visible`
    }))
  // A path git would refuse to write (`.git` aliases, `..`): never approvable, never applied.
  for (const f of diff.all.files) {
    const problem = treePathProblem(f.path)
    if (problem !== null) violations.push({ rule: 'unsafe-path', path: f.path, detail: problem })
  }
  if (snap.truncated)
    limit(
      'snapshot-limit',
      'the workspace was larger than the snapshot limits; not every file was taken'
    )
  violations.push(...secretScan.violations)
  return {
    patch,
    diff: {
      sha256: sha256(patch),
      bytes: patch.length,
      files: diff.files,
      totalFiles: diff.totalFiles,
      filesInPatch: diff.filesInPatch,
      truncated: diff.truncated || snap.truncated,
      truncation,
      redacted,
      skipped: snap.skipped.slice(0, 1000),
      ignored: { total: snap.ignoredTotal, entries: snap.ignored },
      baseTree: ws.tree,
      resultTree: snap.tree
    },
    violations,
    protected: [...hiddenSource, ...checked.protected, ...ignoreFindings(diff.all.files, snap)],
    snapshot: { read: snap.read, reused: snap.reused },
    dependencies: await hashLockfiles(
      ws.gitDir,
      snap.tree,
      ws.dir,
      snap.entries.map((e) => ({ mode: e.mode, path: Buffer.concat(joinParts(e.parts)) }))
    ),
    warnings: [
      ...snap.skipped.slice(0, 50).map((x) => `not taken into the diff: ${x.path} (${x.reason})`),
      ...truncation,
      ...(snap.ignoredTotal > 0
        ? [
            `${snap.ignoredTotal} path(s) left out as tool or build output (the base tree's .gitignore rules and the default list)`
          ]
        : [])
    ]
  }
}

/** A path's components with the slashes between them. */
function joinParts(parts: Buffer[]): Buffer[] {
  const slash = Buffer.from('/')
  return parts.flatMap((p, i) => (i === 0 ? [p] : [slash, p]))
}
