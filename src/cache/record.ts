// What a cache did for the run: the record the cache stage returns (the report keeps it as is).

/** A cache the run used: where, under which key, what it restored, whether it wrote the entry. */
export interface CacheUse {
  store: 'folder' | 'actions'
  key: string
  restored: string | null
  saved: 'saved' | 'exists' | 'skipped' | 'failed'
  detail?: string
}
