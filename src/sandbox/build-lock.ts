import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { CancelledError } from '../errors.js'

/**
 * One build per build key at a time on a machine: a lock file named by the key, created
 * exclusively (O_EXCL), holding who holds it (run id, pid, host, since). A run that finds it
 * waits, then looks for the image again (the holder built it: reused). A lock whose holder
 * process is gone on this host is stale and removed; so is an unreadable lock older than a minute.
 */

export interface LockHolder {
  holder: string
  pid: number
  host: string
  since: string
}

export interface LockOptions {
  /** Folder of the lock files (the host's lockDir: AIRLOCK_LOCK_DIR, else <tmp>/airlock-locks). */
  dir: string
  pollMs?: number
  signal?: AbortSignal
  /** Told once when the lock is held by another run, and when a stale lock is removed. */
  onWait?: (holder: LockHolder | null) => void
  onStale?: (holder: LockHolder | null) => void
}

const STALE_UNREADABLE_MS = 60_000

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function readHolder(file: string): LockHolder | null {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<LockHolder>
    if (typeof v.pid === 'number' && typeof v.host === 'string' && typeof v.holder === 'string')
      return v as LockHolder
  } catch {
    // unreadable or being written
  }
  return null
}

/** A pause on a referenced timer: the process stays alive while a run waits for a lock. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new CancelledError(String(signal.reason ?? 'signal')))
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(new CancelledError(String(signal?.reason ?? 'signal')))
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** Whether the lock at `file` is stale: its holder is gone, or it is unreadable and old. */
function isStale(file: string, holder: LockHolder | null): boolean {
  if (holder === null) {
    try {
      return Date.now() - fs.statSync(file).mtimeMs > STALE_UNREADABLE_MS
    } catch {
      return false
    }
  }
  return holder.host === os.hostname() && !alive(holder.pid)
}

/** Runs `fn` holding the lock of `key` (hex); waits while another process holds it. */
export async function withBuildLock<T>(
  key: string,
  holder: string,
  fn: () => Promise<T>,
  options: LockOptions
): Promise<T> {
  if (!/^[a-f0-9]{16,128}$/.test(key)) throw new Error('a build key is hex')
  const { dir } = options
  await fs.promises.mkdir(dir, { recursive: true })
  const file = path.join(dir, `build-${key}.lock`)
  const mine: LockHolder = {
    holder,
    pid: process.pid,
    host: os.hostname(),
    since: new Date().toISOString()
  }
  const token = JSON.stringify(mine)
  let told = false
  for (;;) {
    try {
      const fd = fs.openSync(
        file,
        fs.constants.O_WRONLY |
          fs.constants.O_CREAT |
          fs.constants.O_EXCL |
          fs.constants.O_NOFOLLOW,
        0o644
      )
      try {
        fs.writeSync(fd, token)
      } finally {
        fs.closeSync(fd)
      }
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const current = readHolder(file)
    if (isStale(file, current)) {
      // Moved aside first, so that only one waiter removes this stale lock.
      const grave = `${file}.stale-${randomBytes(6).toString('hex')}`
      try {
        fs.renameSync(file, grave)
        const moved = readHolder(grave)
        if (moved !== null && JSON.stringify(moved) !== JSON.stringify(current)) {
          // A fresh lock was taken between the read and the move: put it back.
          fs.linkSync(grave, file)
        } else {
          options.onStale?.(current)
        }
        fs.rmSync(grave, { force: true })
      } catch {
        // another waiter moved it first
      }
      continue
    }
    if (!told) {
      told = true
      options.onWait?.(current)
    }
    await pause(options.pollMs ?? 500, options.signal)
  }
  try {
    return await fn()
  } finally {
    // Released only when it is still ours.
    try {
      if (fs.readFileSync(file, 'utf8') === token) fs.rmSync(file, { force: true })
    } catch {
      // already gone
    }
  }
}
