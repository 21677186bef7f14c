import { DEFAULT_DIFF_LIMITS } from '../path-rules.js'
import type { DiffLimits } from '../path-rules.js'
import { git } from '../workspace/git.js'
import { displayPath, splitNul } from '../git-listing.js'

export type FileStatus = 'added' | 'modified' | 'deleted' | 'type-changed'

export interface ChangedFile {
  path: string
  status: FileStatus
  additions: number
  deletions: number
  binary: boolean
  /** git file mode after the change ('000000' when deleted). */
  mode: string
}

/** The blob ids before and after of one changed file ('0'×40 where there is none). */
export interface ChangedBlobs {
  before: string
  after: string
}

export type { DiffLimits } from '../path-rules.js'
export { DEFAULT_DIFF_LIMITS } from '../path-rules.js'

export interface DiffResult {
  /** What `git apply` takes: whole file sections only, also when cut. */
  patch: Buffer
  /** At most `maxChangedFiles` entries. */
  files: ChangedFile[]
  /** Blob ids of each entry of `files`, in the same order (for host-side checks such as package.json scripts). */
  blobs: ChangedBlobs[]
  /** Every changed file, also those not listed (for the path policy), with its blobs. */
  all: { files: ChangedFile[]; blobs: ChangedBlobs[] }
  /** Every changed file, also those not listed. */
  totalFiles: number
  /** Files whose section is in `patch`. */
  filesInPatch: number
  truncated: boolean
  /** Why it was cut, for the report (empty when it was not). */
  truncation: string[]
}

const STATUS: Record<string, FileStatus> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  T: 'type-changed'
}

const COMMON = [
  '-r',
  '--no-renames',
  '--no-ext-diff',
  '--no-textconv',
  '--no-color',
  '--full-index'
]

/**
 * The change between two trees of the private repository, as a patch that `git apply` takes
 * (binary files as binary patches) and a per-file list. Tree to tree in a bare repository: no
 * worktree, so no attributes, filters, textconv or external diff of the repository apply (and
 * `git()` disables hooks, fsmonitor, pager and config on top); no renames guessed.
 */
export async function diffTrees(
  gitDir: string,
  baseTree: string,
  headTree: string,
  limits: DiffLimits = DEFAULT_DIFF_LIMITS
): Promise<DiffResult> {
  // The same tree: nothing changed, and no git process is needed to say so.
  if (baseTree === headTree) return noChange()
  // The file list and the patch, side by side. One byte over the cap tells "exactly the cap"
  // apart from "more than the cap".
  const [summary, raw] = await Promise.all([
    git(['diff-tree', ...COMMON, '-z', '--raw', '--numstat', baseTree, headTree], { gitDir }),
    git(['diff-tree', ...COMMON, '-p', '--binary', baseTree, headTree], {
      gitDir,
      maxStdout: limits.maxDiffBytes + 1
    })
  ])
  const all = parseRawNumstat(summary.stdout)
  const truncation: string[] = []
  let patch = await sourceAsText(gitDir, baseTree, headTree, all, raw.stdout)
  let filesInPatch = countSections(patch)
  if (raw.truncated || patch.length > limits.maxDiffBytes) {
    patch = cutAtSection(patch, limits.maxDiffBytes)
    filesInPatch = countSections(patch)
    truncation.push(
      `diff.patch is larger than max-diff-bytes (${limits.maxDiffBytes}): it holds the first ${filesInPatch} of ${all.length} changed files`
    )
  }
  if (all.length > limits.maxChangedFiles) {
    truncation.push(
      `${all.length} files changed, more than max-changed-files (${limits.maxChangedFiles}): the report lists the first ${limits.maxChangedFiles}`
    )
  }
  const listed = all.slice(0, limits.maxChangedFiles)
  return {
    patch,
    files: listed.map((f) => f.file),
    blobs: listed.map((f) => f.blobs),
    all: { files: all.map((f) => f.file), blobs: all.map((f) => f.blobs) },
    totalFiles: all.length,
    filesInPatch,
    truncated: truncation.length > 0,
    truncation
  }
}

function noChange(): DiffResult {
  return {
    patch: Buffer.alloc(0),
    files: [],
    blobs: [],
    all: { files: [], blobs: [] },
    totalFiles: 0,
    filesInPatch: 0,
    truncated: false,
    truncation: []
  }
}

/**
 * Paths that hold text people read and programs run: source, scripts, configuration, docs. Git
 * calls a file binary when it holds a NUL byte, which would hide such a file's code from the
 * review ("Binary files differ"); these are shown as text instead, NULs made visible by the review.
 */
const SOURCE_PATH =
  /(^|\/)(Makefile|Dockerfile|Gemfile|Rakefile|Jenkinsfile|[^/]*\.(c|cc|cpp|cs|css|cjs|cts|go|gradle|h|hpp|html?|ini|java|js|json|jsx|kt|kts|lua|md|mjs|mts|php|pl|ps1|py|rb|rs|scala|scss|sh|bash|sql|svelte|swift|toml|ts|tsx|txt|vue|xml|ya?ml|zsh|cfg|conf|env))$/i

/** Whether git's binary verdict on this path hides readable text (see SOURCE_PATH). */
export function isSourcePath(p: string): boolean {
  return SOURCE_PATH.test(p)
}

/**
 * The patch with every binary change to a source path as a text section (`--text`: `git apply`
 * takes NUL bytes in text patches). Sections are matched by their `index` line (blob ids, which
 * `--full-index` writes in full), never by the quoted names.
 */
async function sourceAsText(
  gitDir: string,
  baseTree: string,
  headTree: string,
  all: RawEntry[],
  patch: Buffer
): Promise<Buffer> {
  const hidden = all.filter(
    (e) =>
      e.file.binary &&
      e.file.status !== 'deleted' &&
      isSourcePath(e.file.path) &&
      Buffer.from(e.file.path, 'utf8').toString('utf8') === e.file.path
  )
  if (hidden.length === 0) return patch
  const text = (
    await git(
      [
        '--literal-pathspecs',
        'diff-tree',
        ...COMMON,
        '-p',
        '--text',
        baseTree,
        headTree,
        '--',
        ...hidden.map((e) => e.file.path)
      ],
      { gitDir }
    )
  ).stdout
  const byIndex = new Map<string, Buffer>()
  for (const s of sections(text)) {
    const key = indexKey(s)
    if (key !== null) byIndex.set(key, s)
  }
  return Buffer.concat(
    sections(patch).map((s) => {
      const key = indexKey(s)
      return (key !== null ? byIndex.get(key) : undefined) ?? s
    })
  )
}

/** The patch cut at its section starts (anything before the first is its own piece). */
function sections(patch: Buffer): Buffer[] {
  const starts = sectionStarts(patch)
  if (starts[0] !== 0) starts.unshift(0)
  return starts.map((s, i) => patch.subarray(s, starts[i + 1] ?? patch.length))
}

/** `before..after` from a section's `index` header line. */
function indexKey(section: Buffer): string | null {
  const head = section.subarray(0, Math.min(section.length, 8192)).toString('latin1')
  return /\nindex ([0-9a-f]{40})\.\.([0-9a-f]{40})/.exec(head)?.slice(1, 3).join('..') ?? null
}

const SECTION = Buffer.from('diff --git ')

function sectionStarts(patch: Buffer): number[] {
  const starts: number[] = []
  let at = patch.indexOf(SECTION)
  while (at >= 0) {
    if (at === 0 || patch[at - 1] === 0x0a) starts.push(at)
    at = patch.indexOf(SECTION, at + 1)
  }
  return starts
}

function countSections(patch: Buffer): number {
  return sectionStarts(patch).length
}

/**
 * The longest prefix of whole file sections within `max` bytes. A section header line can also
 * appear inside a file's content (a patch of a patch), but only as an added/removed/context line,
 * which starts with '+', '-' or ' ' — never at the start of a line.
 */
export function cutAtSection(patch: Buffer, max: number): Buffer {
  if (patch.length <= max) return patch
  const starts = sectionStarts(patch)
  let end = 0
  for (const s of starts) {
    if (s <= max) end = s
    else break
  }
  // `end` is the start of the first section that does not fit (or of the last one starting in
  // range, whose end is past `max`).
  return patch.subarray(0, end)
}

interface RawEntry {
  file: ChangedFile
  blobs: ChangedBlobs
}

/** Parses `diff-tree -z --raw --numstat` output (raw records first, then numstat records). */
export function parseRawNumstat(out: Buffer): RawEntry[] {
  const fields = splitNul(out)
  const byPath = new Map<string, RawEntry>()
  const order: string[] = []
  let i = 0
  while (i < fields.length) {
    const f = fields[i].toString('latin1')
    if (f.startsWith(':')) {
      const [, dstMode, srcOid, dstOid, status] = f.slice(1).split(' ')
      const p = fields[i + 1]
      const key = p.toString('latin1')
      byPath.set(key, {
        file: {
          path: displayPath(p),
          status: STATUS[status[0]] ?? 'modified',
          additions: 0,
          deletions: 0,
          binary: false,
          mode: dstMode
        },
        blobs: { before: srcOid, after: dstOid }
      })
      order.push(key)
      i += 2
      continue
    }
    const m = /^(-|\d+)\t(-|\d+)\t/.exec(f)
    if (m) {
      const key = fields[i].subarray(m[0].length).toString('latin1')
      const entry = byPath.get(key)?.file
      if (entry) {
        entry.binary = m[1] === '-'
        entry.additions = m[1] === '-' ? 0 : Number(m[1])
        entry.deletions = m[2] === '-' ? 0 : Number(m[2])
      }
    }
    i++
  }
  return order.map((k) => byPath.get(k) as RawEntry)
}
