// What the install phase's own session returns: its proxy's counts (the pipeline adds the phase
// record, the lockfile hashes and the files the install changed).

/** What the install's proxy saw; null when the install ran without network. */
export interface SetupEgress {
  allowed: number
  denied: number
  deniedHosts: string[]
}
