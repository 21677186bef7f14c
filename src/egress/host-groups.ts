// Named host groups: one word in `allow-hosts`, `setup-allow-hosts` or the policy file that stands
// for the exact hosts of a registry or an API. One table for the install phase and the agent;
// docs/egress.md lists the same hosts (a test compares the two).
import { didYouMean } from '../suggest.js'

/**
 * The version of the table below. Raised whenever a group's hosts change, so a maintainer reading
 * a report (which records it) knows which hosts a name stood for on that run.
 */
export const HOST_GROUPS_VERSION = 1

/**
 * Package registries by ecosystem (the install phase's presets, and groups for the agent too).
 * Only the hosts an install downloads from; nothing else (no telemetry, no source forges).
 */
export const REGISTRY_GROUPS: Readonly<Record<string, readonly string[]>> = {
  npm: ['registry.npmjs.org', 'registry.yarnpkg.com'],
  pypi: ['pypi.org', 'files.pythonhosted.org'],
  crates: ['crates.io', 'index.crates.io', 'static.crates.io'],
  go: ['proxy.golang.org', 'sum.golang.org'],
  debian: ['deb.debian.org', 'security.debian.org']
}

/**
 * Every group the agent's `allow-hosts` accepts: the registries, each agent preset's model API,
 * and GitHub's API and raw content. Exact names only: no group holds a wildcard.
 */
export const HOST_GROUPS: Readonly<Record<string, readonly string[]>> = {
  ...REGISTRY_GROUPS,
  anthropic: ['api.anthropic.com'],
  openai: ['api.openai.com'],
  gemini: ['generativelanguage.googleapis.com'],
  github: ['api.github.com', 'raw.githubusercontent.com']
}

/** Groups whose hosts take writes with a token: refused when the sandbox holds one (see egress-inputs). */
export const TOKEN_ENV_OF_GROUP: Readonly<Record<string, readonly string[]>> = {
  github: ['GITHUB_TOKEN', 'GH_TOKEN', 'GITHUB_PAT', 'GH_ENTERPRISE_TOKEN']
}

/** True for an `allow-hosts` item meant as a group name: one word, no dot, no port, no wildcard. */
export function looksLikeGroup(item: string): boolean {
  return /^[A-Za-z][A-Za-z0-9-]*$/.test(item.trim())
}

/**
 * The hosts a group name stands for; throws, naming the known groups and the closest ones, when
 * the name is not a group (the caller adds the input's name).
 */
export function groupHosts(
  name: string,
  groups: Readonly<Record<string, readonly string[]>> = HOST_GROUPS
): readonly string[] {
  const hosts = groups[name.trim().toLowerCase()]
  if (hosts !== undefined) return hosts
  const names = Object.keys(groups)
  throw new Error(
    `"${name.trim()}" is not a host group (${names.join(', ')}) nor a host name with a domain.${didYouMean(name.trim(), names)}`
  )
}

/**
 * The group a set of used hosts makes whole: a group whose every host was used is proposed as its
 * name (a whole registry → its group); the rest stay hosts. Sorted, groups first.
 */
export function groupUsedHosts(
  hosts: Iterable<string>,
  groups: Readonly<Record<string, readonly string[]>> = HOST_GROUPS
): { groups: string[]; hosts: string[] } {
  const left = new Set([...hosts].map((h) => h.toLowerCase()))
  const whole: string[] = []
  for (const [name, members] of Object.entries(groups)) {
    if (members.every((m) => left.has(m))) {
      whole.push(name)
      for (const m of members) left.delete(m)
    }
  }
  return { groups: whole.sort(), hosts: [...left].sort() }
}
