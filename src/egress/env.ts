import type { CredentialRoute } from './credential-routes.js'

/** The proxy's name on the agent's network, and its port. */
export const PROXY_HOST = 'airlock-proxy'
export const PROXY_PORT = 3128
export const PLACEHOLDER_KEY = 'airlock-placeholder-key'
/** The variables the agent gets in allowlist mode (pure; the plan prints them). */
export function agentEgressEnv(credentials: CredentialRoute[]): string[] {
  const proxy = `http://${PROXY_HOST}:${PROXY_PORT}`
  const env = [
    `HTTP_PROXY=${proxy}`,
    `HTTPS_PROXY=${proxy}`,
    `http_proxy=${proxy}`,
    `https_proxy=${proxy}`,
    `NO_PROXY=${PROXY_HOST}`,
    `no_proxy=${PROXY_HOST}`
  ]
  for (const c of credentials) {
    env.push(`${c.baseUrlEnv}=${proxy}/${c.name}`, `${c.keyEnv}=${PLACEHOLDER_KEY}`)
  }
  return env
}
