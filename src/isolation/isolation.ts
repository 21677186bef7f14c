// Isolation tiers: which OCI runtime a run's containers get. `isolation: auto` chooses from the
// risk of the run (the decision model below); a named tier is taken as given. A tier the daemon
// cannot provide for this run fails closed, unless the policy file names a fallback.
import picomatch from 'picomatch'
import { ConfigurationError } from '../errors.js'
import { INPUT } from '../input-names.js'

export const ISOLATION_INPUT = INPUT.isolation
export const FALLBACK_INPUT = 'isolation-fallback'

/** The tier auto picks for risky runs, and for the rest. */
export const STRONG_TIER = 'runsc'
export const DEFAULT_TIER = 'runc'
/**
 * gVisor's second daemon entry, registered with network support (`--network=host`: the sandbox
 * joins the network namespace Docker made for the container). Runs that need a network get it
 * when `runsc` itself is registered with `--network=none` (docs/isolation.md).
 */
export const GVISOR_NETWORK_RUNTIME = 'runsc-net'

export interface IsolationRequest {
  /** `auto`, or a runtime name (`runc`, `runsc`, `kata`, any the daemon has). */
  requested: string
  /** The runtime to use when the chosen one is not available (policy file only); null: none. */
  fallback: string | null
  /**
   * Locally (the CLI, no event): without a base (`policy-base`), compare the head with the
   * repository's default branch (origin/HEAD, else a local main or master).
   */
  compareWithDefaultBranch?: boolean
}

/** What the decision model looks at; every field is known before any container starts. */
export interface RiskFacts {
  /** The pull request comes from a fork (null: not a pull request, or not known). */
  fork: boolean | null
  network: 'none' | 'allowlist'
  /** Credential routes the egress proxy injects. */
  credentials: number
  /** The run has an install phase (install scripts run). */
  setup: boolean
  /** Manifests, lockfiles or install scripts the head changes against the base (null: no base known). */
  dependencyChanges: string[] | null
  /** What the head was compared with when it was not the run's base (the default branch). */
  comparedWith?: string
  /** Why there is no base to compare with, when that is known. */
  noBase?: string
  /** The run needs a network in some container (allowlist, setup-allow-hosts, services). */
  needsNetwork: boolean
}

export interface IsolationDecision {
  requested: string
  tier: string
  /** The daemon runtime the containers get for that tier (e.g. runsc-net for gVisor with network). */
  runtime: string
  reasons: string[]
  /** Set when the chosen tier was not available and the policy's fallback was used. */
  fellBackFrom: string | null
}

/** Pure: the tier auto chooses and why. */
export function chooseTier(facts: RiskFacts): { tier: string; reasons: string[] } {
  const reasons: string[] = []
  if (facts.fork === true) reasons.push('the pull request comes from a fork')
  if (facts.network === 'allowlist') reasons.push('the agent has network (allowlist)')
  if (facts.credentials > 0)
    reasons.push(`${facts.credentials} credential route(s) through the proxy`)
  if (facts.setup) reasons.push('an install phase runs install scripts')
  if (facts.dependencyChanges === null)
    reasons.push(
      `no base to compare with${facts.noBase !== undefined ? ` (${facts.noBase})` : ''}: dependency changes unknown`
    )
  else if (facts.dependencyChanges.length > 0)
    reasons.push(
      `the change touches dependencies or install scripts${facts.comparedWith !== undefined ? ` against ${facts.comparedWith}` : ''} (${facts.dependencyChanges.slice(0, 5).join(', ')}${facts.dependencyChanges.length > 5 ? ', …' : ''})`
    )
  if (reasons.length > 0) return { tier: STRONG_TIER, reasons }
  return {
    tier: DEFAULT_TIER,
    reasons: [
      `same-repository change without network, credentials or dependency changes${facts.comparedWith !== undefined ? ` (compared with ${facts.comparedWith})` : ''}`
    ]
  }
}

/** How the daemon has each runtime registered (`docker info` → Runtimes). */
export type DaemonRuntimes = Record<string, { path?: string; runtimeArgs?: string[] }>

const NO_NETWORK = '--network=none'

/** The daemon runtime that serves `tier` for this run, or why none can. */
export function serving(
  tier: string,
  runtimes: DaemonRuntimes,
  needsNetwork: boolean
): { runtime: string; note: string | null } | { why: string } {
  const r = runtimes[tier]
  if (r === undefined)
    return {
      why: `the Docker daemon has no runtime "${tier}" (it has: ${Object.keys(runtimes).sort().join(', ')})`
    }
  if (!needsNetwork || !(r.runtimeArgs ?? []).includes(NO_NETWORK))
    return { runtime: tier, note: null }
  const net = runtimes[GVISOR_NETWORK_RUNTIME]
  if (tier === STRONG_TIER && net !== undefined && !(net.runtimeArgs ?? []).includes(NO_NETWORK))
    return {
      runtime: GVISOR_NETWORK_RUNTIME,
      note: `gVisor with network through the daemon's "${GVISOR_NETWORK_RUNTIME}" entry (${tier} itself is registered with ${NO_NETWORK})`
    }
  return {
    why: `"${tier}" is registered with ${NO_NETWORK}, and this run needs a network (allowlist, setup-allow-hosts or services)${tier === STRONG_TIER ? ` and the daemon has no "${GVISOR_NETWORK_RUNTIME}" entry with network support` : ''}`
  }
}

/** Why `tier` cannot serve this run, or null when it can. */
export function unavailable(
  tier: string,
  runtimes: DaemonRuntimes,
  needsNetwork: boolean
): string | null {
  const s = serving(tier, runtimes, needsNetwork)
  return 'why' in s ? s.why : null
}

/**
 * The runtime a run that names one directly (`runtime`, no `isolation`) gets: gVisor's network
 * entry when the run needs a network and `runsc` has none; a runtime that cannot serve the run
 * fails closed.
 */
export function resolveRuntime(
  runtime: string,
  runtimes: DaemonRuntimes,
  needsNetwork: boolean
): { runtime: string; note: string | null } {
  const s = serving(runtime, runtimes, needsNetwork)
  if ('why' in s) {
    // A runtime the daemon lacks is the preflight's to report (with the list it has).
    if (runtimes[runtime] === undefined) return { runtime, note: null }
    throw new ConfigurationError(
      'runtime',
      `${s.why}. Register it in the daemon (docs/isolation.md), or use runtime runc for this run`
    )
  }
  return s
}

/**
 * The tier the run gets. A named tier or auto's choice that the daemon cannot provide fails closed
 * (ConfigurationError naming the fix), unless the policy names a fallback that it can provide.
 */
export function resolveIsolation(
  req: IsolationRequest,
  facts: RiskFacts,
  runtimes: DaemonRuntimes
): IsolationDecision {
  const chosen =
    req.requested === 'auto'
      ? chooseTier(facts)
      : { tier: req.requested, reasons: [`isolation: ${req.requested} was asked for`] }
  const decided = (
    tier: string,
    served: { runtime: string; note: string | null },
    reasons: string[],
    fellBackFrom: string | null
  ): IsolationDecision => ({
    requested: req.requested,
    tier,
    runtime: served.runtime,
    reasons: served.note === null ? reasons : [...reasons, served.note],
    fellBackFrom
  })
  const s = serving(chosen.tier, runtimes, facts.needsNetwork)
  if (!('why' in s)) return decided(chosen.tier, s, chosen.reasons, null)
  const why = s.why
  if (req.fallback !== null) {
    const fb = serving(req.fallback, runtimes, facts.needsNetwork)
    if (!('why' in fb))
      return decided(
        req.fallback,
        fb,
        [...chosen.reasons, `${why}: the policy's fallback ${req.fallback} is used`],
        chosen.tier
      )
    const fbWhy = fb.why
    throw new ConfigurationError(
      ISOLATION_INPUT,
      `${chosen.tier} was chosen (${chosen.reasons.join('; ')}) but ${why}; the fallback ${req.fallback} cannot serve either: ${fbWhy}`
    )
  }
  throw new ConfigurationError(
    ISOLATION_INPUT,
    `${chosen.tier} was chosen (${chosen.reasons.join('; ')}) but ${why}. Register it in the daemon (docs/isolation.md), or name a fallback with isolation-fallback in .github/airlock.yml`
  )
}

/** Files whose change makes the run riskier: manifests, lockfiles, install and build scripts. */
export const DEPENDENCY_FILES = picomatch(
  [
    '**/package.json',
    '**/package-lock.json',
    '**/npm-shrinkwrap.json',
    '**/yarn.lock',
    '**/pnpm-lock.yaml',
    '**/bun.lock*',
    '**/.npmrc',
    '**/.yarnrc*',
    '**/pyproject.toml',
    '**/setup.py',
    '**/setup.cfg',
    '**/requirements*.txt',
    '**/Pipfile*',
    '**/poetry.lock',
    '**/uv.lock',
    '**/Cargo.toml',
    '**/Cargo.lock',
    '**/build.rs',
    '**/go.mod',
    '**/go.sum',
    '**/Gemfile*',
    '**/*.gemspec',
    '**/composer.*',
    '**/Makefile',
    '**/Dockerfile*'
  ],
  { dot: true }
)
