import * as fs from 'node:fs'
import * as path from 'node:path'
import { ConfigurationError } from './errors.js'
import { suggest } from './suggest.js'
import { hasControl } from './text-filter.js'
import { readWhole } from './read-fd.js'

/**
 * Bounds every input is held to before it is read for its meaning: its shape (length, line
 * breaks, control characters), durations within what a Node timer can wait, numbers that stay
 * exact, an output folder that can be a folder, and a task that is text or a regular file.
 */

/** The longest delay a Node timer honours (2^31 − 1 ms, about 24.8 days); beyond, it fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1

/** Inputs whose value may span lines (lists, commands, the task, a PEM certificate). */
export const MULTILINE_INPUTS: ReadonlySet<string> = new Set([
  'build-args',
  'test-reports',
  'task',
  'allow-hosts',
  'host-map',
  'credentials',
  'upstream-ca',
  'env',
  'allowed-paths',
  'protected-paths',
  'agent-command',
  'test-command',
  'fail-outcomes',
  'setup-command',
  'setup-allow-hosts',
  'services'
])

/** Largest accepted value, in characters: the task and a PEM may be long, the rest is short. */
const MAX_CHARS: Record<string, number> = { task: 1024 * 1024, 'upstream-ca': 256 * 1024 }
const DEFAULT_MAX_CHARS = 64 * 1024

/** Throws when a raw input value has a shape no input accepts. */
export function checkShape(name: string, raw: string): void {
  const max = MAX_CHARS[name] ?? DEFAULT_MAX_CHARS
  if (raw.length > max) {
    throw new ConfigurationError(
      name,
      `is ${raw.length} characters long; the limit is ${max}${name === 'task' ? ' (give a task file of at most 1 MiB)' : ''}`
    )
  }
  if (raw.includes('\0')) {
    throw new ConfigurationError(name, 'contains a NUL character; remove it')
  }
  if (name !== 'task' && hasControl(raw)) {
    throw new ConfigurationError(
      name,
      'contains a control character (escape, backspace, ...); remove it'
    )
  }
  if (!MULTILINE_INPUTS.has(name) && /[\r\n]/.test(raw.trim())) {
    throw new ConfigurationError(name, 'must be a single line; remove the line breaks')
  }
}

/** Wraps a reader so that every value passes `checkShape` before anyone reads it. */
export function boundedReader(
  read: (name: string) => string | undefined
): (name: string) => string | undefined {
  return (name) => {
    const v = read(name)
    if (v !== undefined) checkShape(name, v)
    return v
  }
}

/**
 * A duration given in `unitMs` units, as milliseconds a timer can wait: `min` (0 or 1 ms) up to
 * MAX_TIMER_MS. Beyond that a Node timer fires at once, which would end every phase as timed out.
 */
export function timerDuration(
  name: string,
  raw: string,
  unitMs: number,
  unitName: string,
  allowZero: boolean
): number {
  const t = raw.trim()
  const n = Number(t)
  if (
    !/^\+?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t) ||
    !Number.isFinite(n) ||
    (!allowZero && n === 0)
  ) {
    throw new ConfigurationError(
      name,
      `"${raw}" must be a number of ${unitName} ${allowZero ? 'of 0 or more' : 'greater than 0'}`
    )
  }
  const ms = Math.round(n * unitMs)
  const max = Math.floor(MAX_TIMER_MS / unitMs)
  if (ms > MAX_TIMER_MS) {
    throw new ConfigurationError(
      name,
      `"${raw}" is longer than a timer can wait (${MAX_TIMER_MS} ms, about 24.8 days); use at most ${max}`
    )
  }
  if (!allowZero && ms < 1) {
    throw new ConfigurationError(name, `"${raw}" is shorter than a millisecond; use a larger value`)
  }
  return n
}

/**
 * The output folder: an existing folder, or a path whose nearest existing ancestor is a folder
 * (it is created). A file where the folder (or one of its parents) should be is refused.
 */
export function outputFolder(name: string, raw: string, abs: string): string {
  let p = abs
  for (;;) {
    let st: fs.Stats | undefined
    try {
      st = fs.statSync(p)
    } catch {
      st = undefined
    }
    if (st !== undefined) {
      if (!st.isDirectory()) {
        throw new ConfigurationError(
          name,
          p === abs
            ? `"${raw}" exists and is not a folder; name a folder (it is created when missing)`
            : `"${raw}" cannot be created: ${p} is not a folder; name a folder elsewhere`
        )
      }
      return abs
    }
    const parent = path.dirname(p)
    if (parent === p) return abs
    p = parent
  }
}

export interface TaskInput {
  text: string
  source: 'text' | 'file'
  /** The file, relative to the workspace, when `source` is `file`. */
  file?: string
  /**
   * Set when the file is not in the workspace: the error to give unless the run has a base commit
   * to read it from (a pull request branched before the file was added has only the base's copy).
   */
  missing?: string
}

const MAX_TASK_FILE = 1024 * 1024

/**
 * The task: a single line that names something inside the workspace must be a regular file
 * (read, at most 1 MiB); a symlink, FIFO, device, socket or folder is refused. Anything else is
 * the task text. The file is opened without following a final symlink and checked after opening,
 * and its real path must stay inside the workspace (no parent folder that is a symlink out).
 */
export function taskInput(name: string, raw: string | undefined, workspace: string): TaskInput {
  if (raw === undefined) return { text: '', source: 'text' }
  const single = !raw.includes('\n') && raw.length < 4096
  if (!single) return { text: raw, source: 'text' }
  const given = raw.trim()
  const candidate = path.resolve(workspace, given)
  const rel = path.relative(workspace, candidate)
  const pathLike = looksLikePath(given)
  const asText =
    'or give the task as text: a sentence with spaces, or several lines (text is never read as a path)'
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
    if (!pathLike) return { text: raw, source: 'text' }
    throw new ConfigurationError(
      name,
      `"${given}" looks like a file path but is outside the workspace ${workspace}; put the task file inside it, ${asText}`
    )
  }
  let st: fs.Stats
  try {
    st = fs.lstatSync(candidate)
  } catch {
    if (!pathLike) return { text: raw, source: 'text' }
    // Not an error yet: on a run with a base commit the task file is read there (src/policy/task.ts).
    return {
      text: '',
      source: 'file',
      file: rel,
      missing: `"${given}" looks like a file path but there is no such file in ${workspace}${closeFile(candidate)}; check the name, ${asText}`
    }
  }
  const hint =
    'give a regular file inside the workspace, or the task as text (text that spans lines is never read as a path)'
  if (!st.isFile()) {
    throw new ConfigurationError(
      name,
      `"${raw.trim()}" is ${kindOf(st)}, not a regular file; ${hint}`
    )
  }
  const realWs = fs.realpathSync(workspace)
  const real = fs.realpathSync(candidate)
  const realRel = path.relative(realWs, real)
  if (realRel.startsWith('..') || path.isAbsolute(realRel)) {
    throw new ConfigurationError(
      name,
      `"${raw.trim()}" resolves (through a symlinked folder) outside the workspace; ${hint}`
    )
  }
  const fd = fs.openSync(
    candidate,
    fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK
  )
  try {
    const opened = fs.fstatSync(fd)
    if (!opened.isFile() || opened.ino !== st.ino || opened.dev !== st.dev) {
      throw new ConfigurationError(name, `"${raw.trim()}" changed while it was read; ${hint}`)
    }
    if (opened.size > MAX_TASK_FILE) {
      throw new ConfigurationError(name, `file "${raw.trim()}" is larger than 1 MiB`)
    }
    return { text: readWhole(fd, opened.size).toString('utf8'), source: 'file', file: rel }
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * A single word that reads as a file name rather than an instruction: it has a slash, or ends in
 * an extension (`task.md`, `../x.txt`). A web address is text.
 */
export function looksLikePath(given: string): boolean {
  if (given === '' || /\s/.test(given) || /^[a-z][a-z0-9+.-]*:\/\//i.test(given)) return false
  return given.includes('/') || given.includes('\\') || /[^./]\.[A-Za-z0-9]{1,10}$/.test(given)
}

/** " (did you mean task.md?)" for a missing file whose folder has one of a close name. */
function closeFile(candidate: string): string {
  let names: string[]
  try {
    names = fs.readdirSync(path.dirname(candidate))
  } catch {
    return ''
  }
  const close = suggest(path.basename(candidate), names)[0]
  if (close === undefined) return ''
  const rel = path.join(path.dirname(candidate), close)
  return ` (did you mean ${path.basename(rel) === rel ? rel : close}?)`
}

function kindOf(st: fs.Stats): string {
  if (st.isSymbolicLink()) return 'a symlink'
  if (st.isFIFO()) return 'a FIFO'
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device'
  if (st.isSocket()) return 'a socket'
  if (st.isDirectory()) return 'a folder'
  return 'not a regular file'
}
