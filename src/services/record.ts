/** What the report records of one service container (pure data, no runtime types). */
export interface ServiceReport {
  name: string
  image: string
  /** The image reference it ran from (the pinned digest or local image ID as given). */
  imageId: string | null
  phase: string
  healthy: boolean
  /** Milliseconds from start until the health command passed. */
  readyMs: number | null
  detail?: string
}
