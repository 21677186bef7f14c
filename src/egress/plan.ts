import { createHash } from 'node:crypto'
import type { EgressInputs } from './inputs.js'
import type { CredentialRoute, HostMapping, HostRule } from './policy.js'
import { agentEgressEnv } from './env.js'

/** The egress part of the RunPlan: rules and routes as data, no secret values. */
export interface EgressPlan {
  allowHosts: HostRule[]
  hostMap: HostMapping[]
  /** Routes without their secrets: which variable holds each and how it is sent. */
  credentials: CredentialRoute[]
  upstreamCaSha256: string | null
  proxyImage: string
  proxyNetwork: string | null
  /** What the agent's environment gains (proxy settings, base URLs, placeholder keys). */
  agentEnv: string[]
}

export function planEgress(inputs: EgressInputs): EgressPlan {
  const credentials = inputs.credentials.map(
    ({ secret: _secret, ...route }): CredentialRoute => route
  )
  return {
    allowHosts: inputs.allow,
    hostMap: inputs.hostMap,
    credentials,
    upstreamCaSha256:
      inputs.upstreamCa !== undefined
        ? createHash('sha256').update(inputs.upstreamCa).digest('hex')
        : null,
    proxyImage: inputs.proxyImage,
    proxyNetwork: inputs.proxyNetwork ?? null,
    agentEnv: agentEgressEnv(credentials)
  }
}
