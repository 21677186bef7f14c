// The egress inputs (`allow-hosts`, `host-map`, `credentials`, `upstream-ca`, `proxy-image`,
// `proxy-network`), read and checked at the edge: every mistake is a ConfigurationError naming
// the input.
import * as fs from 'node:fs'
import * as path from 'node:path'
import { ConfigurationError, errorMessage } from '../errors.js'
import { INPUT } from '../input-names.js'
import type { InputName } from '../input-names.js'
import { list } from '../input-read.js'
import { MIN_SECRET_LENGTH } from '../redact.js'
import type { BudgetLimits } from './budget.js'
import { parseCredential, secretProblem, type CredentialRoute } from './credential-routes.js'
import { parseHostMapping, parseHostRule, type HostMapping, type HostRule } from './host-rules.js'
import { groupHosts, looksLikeGroup, TOKEN_ENV_OF_GROUP } from './host-groups.js'

/** The egress inputs: each applies only with `network: allowlist`. */
export const EGRESS_INPUTS: readonly InputName[] = [
  INPUT.allowHosts,
  INPUT.hostMap,
  INPUT.credentials,
  INPUT.upstreamCa,
  INPUT.proxyImage,
  INPUT.proxyNetwork,
  INPUT.maxModelRequests,
  INPUT.maxModelTokens,
  INPUT.maxCostUsd
]

export interface EgressInputs {
  allow: HostRule[]
  /** The host groups named in allow-hosts (expanded into `allow`), as written, lower-case. */
  groups?: string[]
  hostMap: HostMapping[]
  /** Routes with the secret value resolved from the host environment. */
  credentials: (CredentialRoute & { secret: string })[]
  /** PEM text of an extra CA the proxy trusts for credential upstreams. */
  upstreamCa?: string
  proxyImage: string
  proxyNetwork?: string
  /** max-model-requests / max-model-tokens / max-cost-usd, enforced by the proxy on the credential routes. */
  budget: BudgetLimits
}

/** Variables the sandbox sets itself; a credential may not claim them. */
const RESERVED_ENV = /^(HTTPS?_PROXY|https?_proxy|NO_PROXY|no_proxy|HOME|TMPDIR|AIRLOCK.*)$/

const PINNED_OR_ID = /^([a-z0-9][a-z0-9._\-/:]*@sha256:[a-f0-9]{64}|sha256:[a-f0-9]{64})$/

/**
 * `allow-hosts` items: host rules, or group names (src/egress/host-groups.ts) expanded to their
 * exact hosts. A one-word item that is no group is a mistake, never a single-label host.
 */
export function readAllowHosts(items: string[]): { rules: HostRule[]; groups: string[] } {
  const rules: HostRule[] = []
  const groups: string[] = []
  for (const item of items) {
    try {
      if (looksLikeGroup(item)) {
        const hosts = groupHosts(item)
        groups.push(item.trim().toLowerCase())
        for (const h of hosts) rules.push(parseHostRule(h))
      } else rules.push(parseHostRule(item))
    } catch (error) {
      throw new ConfigurationError(INPUT.allowHosts, errorMessage(error))
    }
  }
  return { rules, groups: [...new Set(groups)] }
}

function each<T>(name: string, items: string[], parse: (s: string) => T): T[] {
  return items.map((item) => {
    try {
      return parse(item)
    } catch (error) {
      throw new ConfigurationError(name, errorMessage(error))
    }
  })
}

/**
 * Undefined with `network: none` (and then every egress input must be absent); the checked
 * egress settings with `network: allowlist`.
 */
export function readEgressInputs(
  read: (name: string) => string | undefined,
  network: 'none' | 'allowlist',
  workspace: string,
  environment: NodeJS.ProcessEnv,
  passedEnv: string[]
): EgressInputs | undefined {
  if (network === 'none') {
    for (const name of EGRESS_INPUTS) {
      if (read(name) !== undefined) {
        throw new ConfigurationError(
          name,
          'only applies with `network: allowlist`; remove it or set network'
        )
      }
    }
    return undefined
  }
  const { rules: allow, groups } = readAllowHosts(list(read(INPUT.allowHosts)))
  for (const group of groups) {
    const token = (TOKEN_ENV_OF_GROUP[group] ?? []).find((v) => passedEnv.includes(v))
    if (token !== undefined)
      throw new ConfigurationError(
        INPUT.allowHosts,
        `the group "${group}" is read-only only while the sandbox holds no token, but env passes ${token}; remove ${token} from env and reach the API through a credentials route with allow= (the token stays in the proxy)`
      )
  }
  const hostMap = each(INPUT.hostMap, list(read(INPUT.hostMap)), parseHostMapping)
  const routes = each(
    INPUT.credentials,
    list(read(INPUT.credentials), { commas: false }),
    parseCredential
  )
  const seen = new Set<string>()
  for (const m of hostMap) {
    if (seen.has(m.host)) throw new ConfigurationError(INPUT.hostMap, `"${m.host}" is mapped twice`)
    seen.add(m.host)
  }
  const names = new Set<string>()
  const envNames = new Set<string>(passedEnv)
  const credentials = routes.map((r) => {
    if (names.has(r.name))
      throw new ConfigurationError(INPUT.credentials, `${r.name} is defined twice`)
    names.add(r.name)
    for (const v of [r.baseUrlEnv, r.keyEnv]) {
      if (RESERVED_ENV.test(v) || envNames.has(v)) {
        throw new ConfigurationError(
          INPUT.credentials,
          `${r.name}: the sandbox variable ${v} is already set by airlock or by env; choose another`
        )
      }
      envNames.add(v)
    }
    const secret = environment[r.secretEnv]
    if (secret === undefined || secret === '') {
      throw new ConfigurationError(
        INPUT.credentials,
        `${r.name}: ${r.secretEnv} is not set in the environment; set it (e.g. from a repository secret) or remove the entry`
      )
    }
    const problem = secretProblem(secret, MIN_SECRET_LENGTH)
    if (problem !== undefined) {
      throw new ConfigurationError(
        INPUT.credentials,
        `${r.name}: the value of ${r.secretEnv} ${problem}; a credential must be one line of printable ASCII (check for a trailing newline or a pasted quote)`
      )
    }
    if (passedEnv.includes(r.secretEnv)) {
      throw new ConfigurationError(
        INPUT.credentials,
        `${r.name}: ${r.secretEnv} is also listed in env, which would put the secret inside the sandbox; remove it from env`
      )
    }
    return { ...r, secret }
  })
  if (allow.length === 0 && credentials.length === 0) {
    throw new ConfigurationError(
      INPUT.allowHosts,
      '`network: allowlist` needs at least one allow-hosts entry or one credentials upstream'
    )
  }
  const upstreamHosts = credentials.map((c) => new URL(c.upstream).hostname)
  for (const m of hostMap) {
    const used =
      upstreamHosts.includes(m.host) ||
      allow.some((r) => (r.wildcard ? m.host.endsWith(`.${r.host}`) : r.host === m.host))
    if (!used) {
      throw new ConfigurationError(
        INPUT.hostMap,
        `"${m.host}" is neither in allow-hosts nor a credentials upstream; add it there or remove the mapping`
      )
    }
  }
  const proxyImage = read(INPUT.proxyImage)
  if (proxyImage === undefined || !PINNED_OR_ID.test(proxyImage)) {
    throw new ConfigurationError(
      INPUT.proxyImage,
      `${proxyImage === undefined ? 'is required with `network: allowlist`' : `"${proxyImage}" is not pinned`}: an image with node 18 or later, as name@sha256:<digest> or a local image ID sha256:<id> (never the agent's image)`
    )
  }
  const proxyNetwork = read(INPUT.proxyNetwork)
  if (proxyNetwork !== undefined && !/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(proxyNetwork)) {
    throw new ConfigurationError(INPUT.proxyNetwork, `"${proxyNetwork}" is not a network name`)
  }
  const upstreamCa = readCa(read(INPUT.upstreamCa), workspace)
  const budget: BudgetLimits = {}
  for (const [name, key] of [
    [INPUT.maxModelRequests, 'maxRequests'],
    [INPUT.maxModelTokens, 'maxTokens']
  ] as const) {
    const raw = read(name)
    if (raw === undefined) continue
    if (!/^[1-9][0-9]{0,11}$/.test(raw.trim())) {
      throw new ConfigurationError(name, `"${raw}" is not a positive whole number`)
    }
    if (credentials.length === 0) {
      throw new ConfigurationError(
        name,
        'counts requests through credentials routes, and none is configured; add one or remove it'
      )
    }
    budget[key] = Number(raw.trim())
  }
  const cost = read(INPUT.maxCostUsd)
  if (cost !== undefined) {
    const usd = Number(cost.trim())
    if (!/^[0-9]{1,9}(\.[0-9]{1,6})?$/.test(cost.trim()) || !(usd > 0)) {
      throw new ConfigurationError(
        INPUT.maxCostUsd,
        `"${cost}" is not a positive amount of US dollars; write it like 2.50 (at most 6 decimals)`
      )
    }
    if (credentials.length === 0) {
      throw new ConfigurationError(
        INPUT.maxCostUsd,
        'counts the cost of requests through credentials routes, and none is configured; add one or remove it'
      )
    }
    budget.maxCostUsd = usd
  }
  return {
    budget,
    allow,
    ...(groups.length > 0 ? { groups } : {}),
    hostMap,
    credentials,
    ...(upstreamCa !== undefined ? { upstreamCa } : {}),
    proxyImage,
    ...(proxyNetwork !== undefined ? { proxyNetwork } : {})
  }
}

const PEM = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/

/** PEM text, or a path (inside the workspace) of a PEM file. */
function readCa(raw: string | undefined, workspace: string): string | undefined {
  if (raw === undefined) return undefined
  let text = raw
  if (!raw.includes('-----BEGIN')) {
    const abs = path.resolve(workspace, raw.trim())
    const rel = path.relative(workspace, abs)
    if (rel.startsWith('..') || path.isAbsolute(rel)) {
      throw new ConfigurationError(INPUT.upstreamCa, `"${raw}" is outside the workspace`)
    }
    try {
      text = fs.readFileSync(abs, 'utf8')
    } catch {
      throw new ConfigurationError(INPUT.upstreamCa, `"${raw}" cannot be read (looked for ${abs})`)
    }
  }
  if (!PEM.test(text)) {
    throw new ConfigurationError(
      INPUT.upstreamCa,
      'must be a PEM certificate (-----BEGIN CERTIFICATE-----) or the path of one'
    )
  }
  return text
}
