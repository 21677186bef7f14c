import { spawn } from 'node:child_process'
import { InfrastructureError } from '../errors.js'

/**
 * Runs git so that nothing a repository (or an agent) configured can run or steer it: no system
 * or global config, no hooks, no fsmonitor, no pager, no external diff or textconv, no replace
 * objects, no prompts. Arguments are passed as argv, never through a shell.
 */
export interface GitOptions {
  gitDir?: string
  cwd?: string
  input?: Buffer | string
  indexFile?: string
  /** Stop collecting stdout beyond this many bytes (the process is killed). */
  maxStdout?: number
}

const SAFE_CONFIG = [
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.pager=cat',
  '-c',
  'core.quotePath=false',
  '-c',
  'diff.external=',
  '-c',
  'diff.noprefix=false',
  '-c',
  'diff.mnemonicPrefix=false',
  '-c',
  'diff.relative=false',
  '-c',
  'color.ui=false',
  '-c',
  'safe.directory=*',
  // Paths that are `.git` on HFS+ (ignorable code points) or NTFS (short names, trailing dots)
  // are refused wherever git writes an index or a tree, on every platform.
  '-c',
  'core.protectHFS=true',
  '-c',
  'core.protectNTFS=true',
  '-c',
  'protocol.allow=never',
  '-c',
  'protocol.file.allow=always'
]

export function safeGitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LC_ALL: 'C',
    HOME: '/nonexistent',
    XDG_CONFIG_HOME: '/nonexistent',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    ...extra
  }
}

export interface GitResult {
  stdout: Buffer
  truncated: boolean
}

export function git(args: string[], options: GitOptions = {}): Promise<GitResult> {
  const extra: Record<string, string> = {}
  if (options.gitDir !== undefined) extra.GIT_DIR = options.gitDir
  if (options.indexFile !== undefined) extra.GIT_INDEX_FILE = options.indexFile
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...SAFE_CONFIG, ...args], {
      cwd: options.cwd ?? '/',
      env: safeGitEnv(extra),
      stdio: ['pipe', 'pipe', 'pipe']
    })
    const chunks: Buffer[] = []
    let size = 0
    let truncated = false
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => {
      if (truncated) return
      if (options.maxStdout !== undefined && size + c.length > options.maxStdout) {
        chunks.push(c.subarray(0, options.maxStdout - size))
        size = options.maxStdout
        truncated = true
        child.kill('SIGKILL')
        return
      }
      chunks.push(c)
      size += c.length
    })
    child.stderr.on('data', (c: Buffer) => {
      if (stderr.length < 8192) stderr += c.toString('utf8')
    })
    child.on('error', (error) =>
      reject(new InfrastructureError(`cannot run git: ${error.message}`, { cause: error }))
    )
    child.on('close', (code) => {
      if (code === 0 || truncated) resolve({ stdout: Buffer.concat(chunks), truncated })
      else reject(new GitError(args, code, stderr.trim()))
    })
    child.stdin.on('error', () => undefined)
    child.stdin.end(options.input ?? '')
  })
}

export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly code: number | null,
    readonly stderr: string
  ) {
    super(`git ${args[0]} failed (exit ${code}): ${stderr}`)
    this.name = 'GitError'
  }
}

/**
 * Reads `commit` into the private index `indexFile` and applies `patch` there (`git apply
 * --cached`): nothing is checked out, so no file, attribute, hook or filter of the repository takes
 * part, and git refuses paths with `..` or a `.git` component (and, with the safe config, their
 * HFS/NTFS aliases). Returns null when it applied, else the first lines of git's refusal.
 */
export async function applyInIndex(
  gitDir: string,
  indexFile: string,
  commit: string,
  patch: Buffer
): Promise<string | null> {
  await git(['read-tree', commit], { gitDir, indexFile })
  try {
    await git(['apply', '--cached', '--whitespace=nowarn', '-'], {
      gitDir,
      indexFile,
      input: patch
    })
    return null
  } catch (error) {
    if (error instanceof GitError) return error.stderr.split('\n').slice(0, 3).join(' ').trim()
    throw error
  }
}
