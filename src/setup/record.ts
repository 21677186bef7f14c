// What the install phase's own session returns: its proxy's counts (the pipeline adds the phase
// record, the lockfile hashes and the files the install changed).

/** What the install's proxy saw; null when the install ran without network. */
export interface SetupEgress {
  allowed: number
  denied: number
  deniedHosts: string[]
  /** The proxy's refusals, one per host and reason (at most 20), each with the fix. */
  denials?: SetupDenial[]
}

/** One refusal of the install's proxy: the host, why, and which input fixes it. */
export interface SetupDenial {
  host: string
  reason: string
  /** The input that decides it (`setup-allow-hosts`, `host-map`), or null: not a setting. */
  input: 'setup-allow-hosts' | 'host-map' | null
  fix: string
}
