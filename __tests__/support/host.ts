// The host's facts for tests that build the Docker backend themselves: read once from this
// process's environment, as the entries do.
import { readHost } from '../../src/host.js'
import type { Host } from '../../src/host.js'

export const testHost: Host = readHost(process.env)
