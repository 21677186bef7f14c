// The Actions cache as a cache store, through `@actions/cache` (the client of actions/cache). Its
// own file: the action loads it, the CLI (which never talks to GitHub) does not.
import * as cache from '@actions/cache'
import { errorMessage } from '../errors.js'
import { empty } from './store.js'
import type { CacheStore } from './store.js'

/**
 * The Actions cache through `@actions/cache` (the client of actions/cache). `dir` must be the
 * same path in the run that saves and the runs that restore: the entry's version hashes it.
 */
export class ActionsStore implements CacheStore {
  readonly kind = 'actions' as const
  readonly pathBound = true
  constructor(private readonly log: { info(l: string): void; warn(l: string): void }) {}

  static available(): boolean {
    return cache.isFeatureAvailable()
  }

  async restore(dir: string, key: string, restoreKeys: string[]): Promise<string | undefined> {
    await empty(dir)
    try {
      return await cache.restoreCache([dir], key, restoreKeys)
    } catch (error) {
      this.log.warn(`cache restore (${key}): ${errorMessage(error)}`)
      return undefined
    }
  }

  async save(dir: string, key: string): Promise<'saved' | 'exists'> {
    // -1: the service refused the reservation (the key exists, or another job is writing it).
    const id = await cache.saveCache([dir], key)
    return id === -1 ? 'exists' : 'saved'
  }
}
