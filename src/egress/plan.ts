import { createHash } from 'node:crypto'
import type { BudgetLimits } from './budget.js'
import type { EgressInputs } from './egress-inputs.js'
import type { CredentialRoute } from './credential-routes.js'
import type { HostMapping, HostRule } from './host-rules.js'
import { agentEgressEnv } from './env.js'

/** The egress part of the RunPlan: rules and routes as data, no secret values. */
export interface EgressPlan {
  allowHosts: HostRule[]
  /** The host groups allow-hosts named (already expanded into allowHosts), for the ledger. */
  groups?: string[]
  hostMap: HostMapping[]
  /** Routes without their secrets: which variable holds each and how it is sent. */
  credentials: CredentialRoute[]
  upstreamCaSha256: string | null
  proxyImage: string
  proxyNetwork: string | null
  /** max-model-requests / max-model-tokens / max-cost-usd (absent: no limit). */
  budget: BudgetLimits
  /** What the agent's environment gains (proxy settings, base URLs, placeholder keys). */
  agentEnv: string[]
}

export function planEgress(inputs: EgressInputs): EgressPlan {
  const credentials = inputs.credentials.map(
    ({ secret: _secret, ...route }): CredentialRoute => route
  )
  return {
    allowHosts: inputs.allow,
    ...(inputs.groups !== undefined ? { groups: inputs.groups } : {}),
    hostMap: inputs.hostMap,
    credentials,
    upstreamCaSha256:
      inputs.upstreamCa !== undefined
        ? createHash('sha256').update(inputs.upstreamCa).digest('hex')
        : null,
    proxyImage: inputs.proxyImage,
    proxyNetwork: inputs.proxyNetwork ?? null,
    budget: inputs.budget,
    agentEnv: agentEgressEnv(credentials)
  }
}

/** The egress stage's secret values, beside its plan: each route's secret by route name. */
export interface EgressSecrets {
  credentials: Record<string, string>
  /** PEM text of the extra CA (the plan holds its sha256). */
  upstreamCa?: string
}

export function egressSecrets(inputs: EgressInputs): EgressSecrets {
  return {
    credentials: Object.fromEntries(inputs.credentials.map((c) => [c.name, c.secret])),
    ...(inputs.upstreamCa !== undefined ? { upstreamCa: inputs.upstreamCa } : {})
  }
}

/** The plan's routes with their secrets, for the proxy (a route without its secret is a bug). */
export function routesWithSecrets(
  plan: EgressPlan,
  secrets: EgressSecrets | undefined
): (CredentialRoute & { secret: string })[] {
  return plan.credentials.map((route) => {
    const secret = secrets?.credentials[route.name]
    if (secret === undefined) throw new Error(`credential route ${route.name} without its secret`)
    return { ...route, secret }
  })
}
