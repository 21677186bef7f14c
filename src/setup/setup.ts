// The install phase: `setup-command` once on the fresh workspace, before the baseline and the agent,
// in its own hardened container whose only way out is the egress proxy with the registries of
// `setup-allow-hosts`. Its result (node_modules, a virtualenv, a build) is what the baseline, the
// agent and the tests start from. Install scripts run here, inside the sandbox, never on the host.
import * as fs from 'node:fs'
import * as path from 'node:path'
import { summarizeEgress } from '../egress/evidence.js'
import type { EgressEvent } from '../egress/proxy.js'
import { startEgress } from '../egress/session.js'
import type { EgressSession } from '../egress/session.js'
import type { Runtime } from '../sandbox/types.js'
import { diffTrees } from '../evidence/diff.js'
import type { IgnoreRules } from '../evidence/ignore.js'
import { hashLockfiles } from '../evidence/metadata.js'
import type { DependencyFile } from '../evidence/metadata.js'
import type { PolicyFinding } from '../evidence/policy.js'
import { snapshotWorkspace } from '../evidence/snapshot.js'
import type { RunPlan } from '../plan.js'
import type { LockfileHashes, PhaseReport, SetupReport } from '../report/report.js'

export type { SetupReport }
import type { PhaseResult } from '../sandbox/types.js'
import type { Workspace } from '../workspace/workspace.js'

import { OUTPUT_FILES } from '../report/output.js'

export const SETUP_FILES = { log: OUTPUT_FILES.setupLog, egress: OUTPUT_FILES.setupEgress } as const

const MAX_CHANGED_LISTED = 100

export interface SetupDeps {
  runtime: Runtime
  proxyScript: string
  info: (line: string) => void
  /** Runs the phase's container (the pipeline's one phase runner), with the proxy when given. */
  runPhase: (egress: EgressSession | undefined) => Promise<{
    result: PhaseResult
    report: PhaseReport
  }>
}

/**
 * Runs the install phase on `ws.dir` and returns its report; the proxy it started is stopped and
 * removed before this returns, whatever happened.
 */
export async function runSetup(
  plan: RunPlan,
  ws: Workspace,
  rules: IgnoreRules,
  outDir: string,
  deps: SetupDeps
): Promise<{ report: SetupReport; result: PhaseResult }> {
  const setup = plan.setup
  const phase = plan.phases.find((p) => p.name === 'setup')
  if (!setup || !phase) throw new Error('runSetup without a setup phase in the plan')
  const before = await hashLockfiles(ws.gitDir, ws.tree, ws.dir)
  let session: EgressSession | undefined
  let egress: SetupReport['egress'] = null
  let ran: { result: PhaseResult; report: PhaseReport }
  try {
    if (phase.network === 'allowlist') {
      if (!setup.proxy) throw new Error('a setup phase with network but without a proxy')
      session = await startEgress(deps.runtime, {
        runId: `${plan.runId}-setup`,
        labels: plan.labels,
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
      egress = {
        allowed: summary.allowed,
        denied: summary.denied,
        deniedHosts: summary.deniedHosts
      }
      await fs.promises.writeFile(
        path.join(outDir, SETUP_FILES.egress),
        capture.events.map((e: EgressEvent) => JSON.stringify(e) + '\n').join('')
      )
    }
  }
  const after = await hashLockfiles(ws.gitDir, ws.tree, ws.dir)
  // Which tracked files the install changed: its build output is ignored, as in the diff.
  const snap = await snapshotWorkspace(ws.dir, ws.gitDir, undefined, ws.tree, rules, ws.stats)
  const changed = await diffTrees(ws.gitDir, ws.tree, snap.tree, {
    maxChangedFiles: MAX_CHANGED_LISTED,
    maxDiffBytes: 0
  })
  return {
    result: ran.result,
    report: {
      command: phase.command[2] ?? phase.command.join(' '),
      phase: ran.report,
      presets: setup.presets,
      allowHosts: setup.allowHosts.map(
        (r) =>
          `${r.wildcard ? '*.' : ''}${r.host}${r.ports.length > 0 ? `:${r.ports.join('|')}` : ''}`
      ),
      egress,
      lockfiles: mergeHashes(before, after),
      changedFiles: changed.files.map((f) => f.path),
      changedTotal: changed.totalFiles
    }
  }
}

function mergeHashes(before: DependencyFile[], after: DependencyFile[]): LockfileHashes[] {
  const paths = [...new Set([...before, ...after].map((d) => d.path))].sort()
  const get = (list: DependencyFile[], p: string): string | null =>
    list.find((d) => d.path === p)?.sha256 ?? null
  return paths.map((p) => ({
    path: p,
    beforeSetup: get(before, p),
    afterSetup: get(after, p),
    afterAgent: null
  }))
}

/**
 * Completes the lockfile record with the hashes after the agent, and flags what the install
 * changed (it shows in the diff, but it was not the agent) and lockfiles the agent changed.
 */
export function finishSetupReport(
  report: SetupReport,
  afterAgent: DependencyFile[]
): PolicyFinding[] {
  const findings: PolicyFinding[] = []
  for (const d of afterAgent) {
    let rec = report.lockfiles.find((l) => l.path === d.path)
    if (!rec) {
      rec = { path: d.path, beforeSetup: null, afterSetup: null, afterAgent: null }
      report.lockfiles.push(rec)
    }
    rec.afterAgent = d.sha256
  }
  for (const l of report.lockfiles) {
    if (l.afterAgent !== l.afterSetup)
      findings.push({
        rule: 'lockfile-changed',
        path: l.path,
        detail: `the agent changed this lockfile after the install phase (sha256 ${short(l.afterSetup)} → ${short(l.afterAgent)}); the tests ran with dependencies the install did not resolve`
      })
  }
  for (const f of report.changedFiles)
    findings.push({
      rule: 'setup-changed',
      path: f,
      detail: 'changed by the install phase (setup-command), not by the agent; it is in the diff'
    })
  if (report.changedTotal > report.changedFiles.length)
    findings.push({
      rule: 'setup-changed',
      path: null,
      detail: `…and ${report.changedTotal - report.changedFiles.length} more files the install phase changed`
    })
  return findings
}

function short(h: string | null): string {
  return h === null ? 'absent' : h.slice(0, 12)
}
