// The install phase's inputs (`setup-command`, `setup-allow-hosts`), read and checked at the edge.
import { ConfigurationError, errorMessage } from '../errors.js'
import { INPUT } from '../input-names.js'
import type { EgressInputs } from '../egress/egress-inputs.js'
import { parseHostMapping, parseHostRule } from '../egress/host-rules.js'
import { REGISTRY_GROUPS } from '../egress/host-groups.js'
import { didYouMean } from '../suggest.js'
import type { HostMapping, HostRule } from '../egress/host-rules.js'

/** The install phase as the run plans it: the registries it may reach and its proxy. */
export interface SetupPlan {
  presets: string[]
  allowHosts: HostRule[]
  proxy: { image: string; hostMap: HostMapping[]; network: string | null } | null
}

/**
 * Package registries by ecosystem: what `setup-allow-hosts` presets stand for (the same table as
 * the agent's registry groups, src/egress/host-groups.ts).
 */
export const REGISTRY_PRESETS = REGISTRY_GROUPS

export interface SetupInputs {
  command: string
  /** The preset names given (for the report) and every host rule they and the explicit hosts make. */
  presets: string[]
  allow: HostRule[]
  /** With at least one allowed host: the proxy that carries the install's traffic. */
  proxy?: { image: string; hostMap: HostMapping[]; network?: string }
}

/** Inputs the setup phase shares with the agent's egress (read here when the agent has none). */
export const SHARED_PROXY_INPUTS: readonly string[] = [
  INPUT.proxyImage,
  INPUT.hostMap,
  INPUT.proxyNetwork
]

const PINNED_OR_ID = /^([a-z0-9][a-z0-9._\-/:]*@sha256:[a-f0-9]{64}|sha256:[a-f0-9]{64})$/

function items(raw: string | undefined): string[] {
  if (raw === undefined) return []
  return raw
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter((s) => s !== '' && !s.startsWith('#'))
}

/**
 * Undefined without `setup-command` (and then `setup-allow-hosts` must be absent). The proxy
 * settings come from the agent's egress settings when it has them (`network: allowlist`), else
 * from the same inputs read here.
 */
export function readSetupInputs(
  read: (name: string) => string | undefined,
  egress: EgressInputs | undefined
): SetupInputs | undefined {
  const command = read(INPUT.setupCommand)
  const hostsRaw = read(INPUT.setupAllowHosts)
  if (command === undefined || command.trim() === '') {
    if (hostsRaw !== undefined)
      throw new ConfigurationError(
        INPUT.setupAllowHosts,
        'only applies with `setup-command`; remove it or give the install command'
      )
    return undefined
  }
  const presets: string[] = []
  const allow: HostRule[] = []
  for (const item of items(hostsRaw)) {
    const preset = REGISTRY_PRESETS[item]
    if (preset !== undefined) {
      presets.push(item)
      for (const h of preset) allow.push(parseHostRule(h))
      continue
    }
    if (!/[.:]/.test(item))
      throw new ConfigurationError(
        INPUT.setupAllowHosts,
        `"${item}" is not a preset (${Object.keys(REGISTRY_PRESETS).join(', ')}) nor a host name with a domain.${didYouMean(item, Object.keys(REGISTRY_PRESETS))}`
      )
    try {
      allow.push(parseHostRule(item))
    } catch (error) {
      throw new ConfigurationError(
        INPUT.setupAllowHosts,
        `${errorMessage(error)}; or a preset: ${Object.keys(REGISTRY_PRESETS).join(', ')}`
      )
    }
  }
  if (allow.length === 0) return { command, presets, allow }
  if (egress !== undefined)
    return {
      command,
      presets,
      allow,
      proxy: {
        image: egress.proxyImage,
        hostMap: egress.hostMap,
        ...(egress.proxyNetwork !== undefined ? { network: egress.proxyNetwork } : {})
      }
    }
  const image = read(INPUT.proxyImage)
  if (image === undefined || !PINNED_OR_ID.test(image))
    throw new ConfigurationError(
      INPUT.proxyImage,
      `${image === undefined ? 'is required with `setup-allow-hosts`' : `"${image}" is not pinned`}: an image with node 18 or later, as name@sha256:<digest> or a local image ID sha256:<id>; the install reaches registries only through this proxy`
    )
  const hostMap = items(read(INPUT.hostMap)).map((m) => {
    try {
      return parseHostMapping(m)
    } catch (error) {
      throw new ConfigurationError(INPUT.hostMap, errorMessage(error))
    }
  })
  for (const m of hostMap) {
    if (!allow.some((r) => (r.wildcard ? m.host.endsWith(`.${r.host}`) : r.host === m.host)))
      throw new ConfigurationError(
        INPUT.hostMap,
        `"${m.host}" is not in setup-allow-hosts; add it there or remove the mapping`
      )
  }
  const network = read(INPUT.proxyNetwork)
  if (network !== undefined && !/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(network))
    throw new ConfigurationError(INPUT.proxyNetwork, `"${network}" is not a network name`)
  return {
    command,
    presets,
    allow,
    proxy: { image, hostMap, ...(network !== undefined ? { network } : {}) }
  }
}
