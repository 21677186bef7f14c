// The install phase: `setup-command` once on the fresh workspace, before the baseline and the agent,
// in its own hardened container whose only way out is the egress proxy with the registries of
// `setup-allow-hosts`. Its result (node_modules, a virtualenv, a build) is what the baseline, the
// agent and the tests start from. Install scripts run here, inside the sandbox, never on the host.
// This module runs the phase inside its proxy session and returns what the session saw; the
// pipeline records the rest (lockfile hashes, the files the install changed).
import * as fs from 'node:fs'
import { summarizeEgress } from '../egress/evidence.js'
import type { EgressEvent } from '../egress/proxy.js'
import { startEgress } from '../egress/session.js'
import type { EgressOptions, EgressSession } from '../egress/session.js'
import type { SetupPlan } from './setup-inputs.js'
import type { Runtime } from '../sandbox/types.js'
import type { SetupDenial, SetupEgress } from './record.js'
import { INPUT } from '../input-names.js'

export type { SetupDenial, SetupEgress, SetupPlan }

const MAX_DENIALS = 20

/** What the install phase's session needs of the run. */
export interface SetupRun extends Pick<EgressOptions, 'runId' | 'labels'> {
  setup: SetupPlan
  /** The phase reaches its registries (`setup-allow-hosts` given): through a proxy. */
  allowlist: boolean
}

/**
 * The proxy's refusals as the user's fix: a host not allowed needs `setup-allow-hosts`; a name
 * that resolves to a non-public address (a registry of one's own) or not at all needs `host-map`.
 */
export function setupDenials(events: EgressEvent[]): SetupDenial[] {
  const seen = new Map<string, SetupDenial>()
  for (const e of events) {
    if (e.allowed || e.reason === undefined || e.reason === 'bad-request') continue
    // The host came from the install: only name/address characters are kept.
    if (!/^[A-Za-z0-9.:[\]-]{1,255}$/.test(e.host)) continue
    const host = e.port > 0 ? `${e.host}:${e.port}` : e.host
    const key = `${host} ${e.reason}`
    if (seen.has(key) || seen.size >= MAX_DENIALS) continue
    seen.set(key, { host, reason: e.reason, ...denialFix(e.reason, host) })
  }
  return [...seen.values()]
}

function denialFix(reason: string, host: string): Pick<SetupDenial, 'input' | 'fix'> {
  switch (reason) {
    case 'not-allowlisted':
      return {
        input: INPUT.setupAllowHosts,
        fix: `not in ${INPUT.setupAllowHosts}: add ${host} (or a preset that holds it) if the install needs it`
      }
    case 'private-address':
      return {
        input: INPUT.hostMap,
        fix: `resolves to a non-public address: set ${INPUT.hostMap} (name=address) for a registry of your own`
      }
    case 'dns-failed':
      return {
        input: INPUT.hostMap,
        fix: `does not resolve from the proxy: check the name, or set ${INPUT.hostMap} (name=address)`
      }
    case 'ip-literal':
      return {
        input: INPUT.setupAllowHosts,
        fix: `an IP address is never allowed: name the registry by host name in the install's configuration and in ${INPUT.setupAllowHosts}`
      }
    default:
      return { input: null, fix: `refused by the proxy (${reason}); see setup-egress.jsonl` }
  }
}

export interface SetupDeps<P> {
  runtime: Runtime
  proxyScript: string
  info: (line: string) => void
  /** Where the install's proxy log goes (one JSON event a line). */
  egressFile: string
  /** Runs the phase's container (the pipeline's one phase runner), with the proxy when given. */
  runPhase: (egress: EgressSession | undefined) => Promise<P>
}

/**
 * Runs the install phase (through its proxy when it has registries) and returns what the phase
 * runner returned with the proxy's counts; the proxy is stopped and removed before this returns,
 * whatever happened.
 */
export async function runSetup<P>(
  run: SetupRun,
  deps: SetupDeps<P>
): Promise<{ ran: P; egress: SetupEgress | null }> {
  const { setup } = run
  let session: EgressSession | undefined
  let egress: SetupEgress | null = null
  let ran: P
  try {
    if (run.allowlist) {
      if (!setup.proxy) throw new Error('a setup phase with network but without a proxy')
      session = await startEgress(deps.runtime, {
        runId: `${run.runId}-setup`,
        labels: run.labels,
        proxyImage: setup.proxy.image,
        proxyScript: deps.proxyScript,
        allow: setup.allowHosts,
        hostMap: setup.proxy.hostMap,
        credentials: [],
        ...(setup.proxy.network !== null ? { upstreamNetwork: setup.proxy.network } : {})
      })
      deps.info(`setup: egress proxy up, ${setup.allowHosts.length} registry host rule(s)`)
    }
    ran = await deps.runPhase(session)
  } finally {
    if (session) {
      const capture = await session.stop()
      const summary = summarizeEgress(capture.events, [], capture.overflow)
      const denials = setupDenials(capture.events)
      egress = {
        allowed: summary.allowed,
        denied: summary.denied,
        deniedHosts: summary.deniedHosts,
        ...(denials.length > 0 ? { denials } : {})
      }
      await fs.promises.writeFile(
        deps.egressFile,
        capture.events.map((e: EgressEvent) => JSON.stringify(e) + '\n').join('')
      )
    }
  }
  return { ran, egress }
}

/** The host rules as the record shows them (`*.host:port|port`). */
export function describeAllowHosts(setup: SetupPlan | undefined): string[] {
  return (setup?.allowHosts ?? []).map(
    (r) => `${r.wildcard ? '*.' : ''}${r.host}${r.ports.length > 0 ? `:${r.ports.join('|')}` : ''}`
  )
}
