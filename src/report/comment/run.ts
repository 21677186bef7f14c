// The comment's sections about the run itself: the sandbox it ran in, its cost and its metadata.
import type { Report, SetupReport } from '../report.js'
import { bytes, code, t } from './text.js'

/** The model the run used: measured or configured, and the agent's claim when it differs. */
function modelValue(report: Report): string {
  const used = report.agent.model
  const claimed = report.cost.tokens?.model ?? null
  if (used === null) return claimed ?? 'n/a'
  return claimed !== null && claimed !== used ? `${used} (usage.json says ${claimed})` : used
}

export function sandboxSection(report: Report): string {
  const s = report.sandbox
  const a = s.applied
  const rows: [string, string][] = [
    ['runtime', a?.runtime ?? s.runtime],
    ['network', a?.network ?? s.network],
    ['user', a?.user ?? s.user],
    ['read-only root filesystem', String(a?.readOnlyRootfs ?? s.readOnlyRootfs)],
    ['capabilities dropped', (a?.capDrop ?? s.capDrop).join(', ')],
    ['no-new-privileges', String(a?.noNewPrivileges ?? s.noNewPrivileges)],
    ['memory (swap included)', bytes(a?.memoryBytes ?? s.memory)],
    ['cpus', String(a?.cpus ?? s.cpus)],
    ['pids limit', String(a?.pidsLimit ?? s.pidsLimit)],
    ['image', report.image.id ?? 'n/a'],
    ['base images', report.image.baseDigests.join(', ') || 'n/a'],
    ['settings read from', s.source === 'inspect' ? 'the container (docker inspect)' : 'the plan']
  ]
  return (
    '<details><summary>Sandbox</summary>\n\n| setting | value |\n|---|---|\n' +
    rows.map(([k, v]) => `| ${k} | ${t(v, 300)} |`).join('\n') +
    '\n\n</details>'
  )
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`

/** The install phase: its command, the dependency cache's hit or miss, what it reached. */
export function installSection(report: Report): string | null {
  const s = report.setup
  if (s === undefined) return null
  const p = s.phase
  const status = p.timedOut
    ? 'timed out'
    : p.oomKilled
      ? 'out of memory'
      : p.exitCode === null
        ? 'did not finish'
        : `exit ${p.exitCode}`
  const parts = [`**Install:** ${code(s.command, 300)} — ${status} in ${seconds(p.durationMs)}`]
  const c = s.cache
  if (c !== undefined)
    parts.push(
      `dependency cache: ${c.restored !== null ? `hit (${code(c.restored, 120)})` : 'miss'}${c.saved === 'saved' ? ', saved' : ''}`
    )
  else parts.push('dependency cache: off')
  parts.push(
    s.egress === null
      ? 'egress: none (no network)'
      : `egress: ${s.egress.allowed} allowed, ${s.egress.denied} denied${s.egress.deniedHosts.length > 0 ? ` (${s.egress.deniedHosts.map((h) => code(h, 100)).join(', ')})` : ''}`
  )
  if (s.changedTotal > 0) parts.push(`${s.changedTotal} tracked file(s) changed by the install`)
  const resolved = resolvedLine(s.resolved)
  if (resolved !== null) parts.push(resolved)
  return parts.join(' · ')
}

/** The trees the install resolved, one short clause each (the listing is in report.json). */
function resolvedLine(resolved: SetupReport['resolved']): string | null {
  const trees = resolved?.trees ?? []
  if (trees.length === 0) return null
  const shown = trees.slice(0, 3).map((tr) => {
    const where = `${tr.total} ${tr.kind} package${tr.total === 1 ? '' : 's'} in ${code(tr.path, 120)}`
    if (tr.sha256 === null)
      return `${tr.kind} ${code(tr.path, 120)} not read: ${t(tr.note ?? '', 120)}`
    return `${where} (sha256 ${code(tr.sha256.slice(0, 12))})`
  })
  const rest = trees.length > 3 ? `, and ${trees.length - 3} more` : ''
  return `resolved: ${shown.join(', ')}${rest}`
}

/** How long each step and phase took. */
export function timesLine(report: Report): string {
  const st = report.cost.steps ?? {}
  const parts: string[] = []
  if (st.imageMs !== undefined) parts.push(`image ${seconds(st.imageMs)}`)
  if (report.setup) parts.push(`install ${seconds(report.setup.phase.durationMs)}`)
  if (report.tests.baseline)
    parts.push(`baseline ${seconds(report.tests.baseline.phase.durationMs)}`)
  if (st.proxyStartMs !== undefined) parts.push(`proxy start ${seconds(st.proxyStartMs)}`)
  parts.push(`agent ${seconds(report.agent.durationMs)}`)
  if (st.diffMs !== undefined) parts.push(`diff ${seconds(st.diffMs)}`)
  if (report.tests.phase) parts.push(`tests ${seconds(report.tests.phase.durationMs)}`)
  if (report.tests.rerun) parts.push(`re-run ${seconds(report.tests.rerun.phase.durationMs)}`)
  parts.push(`total ${seconds(report.cost.wallMs)}`)
  return `**Time:** ${parts.join(' · ')}`
}

export function costLine(report: Report): string {
  const c = report.cost
  const parts = [`${(c.wallMs / 1000).toFixed(1)} s wall`]
  if (c.cpuSeconds !== null) parts.push(`${c.cpuSeconds.toFixed(1)} CPU s`)
  if (c.peakMemoryBytes !== null) parts.push(`${bytes(c.peakMemoryBytes)} peak`)
  if (c.tokens !== null) {
    const tk = c.tokens
    const n = (x: number | null): string => (x === null ? '?' : String(x))
    parts.push(`${n(tk.input)} in / ${n(tk.output)} out tokens`)
  }
  if (c.usd !== null)
    parts.push(
      `$${c.usd.toFixed(4)} (the agent's claim${c.usdSource === 'cli' ? ", from its CLI's report" : c.usdSource === 'usage.json' ? ', usage.json' : ''})`
    )
  if (c.estimate)
    parts.push(`≈ $${c.estimate.usd.toFixed(4)} (estimate: measured tokens × list price)`)
  const setup = report.setup?.egress
  const install =
    setup !== undefined && setup !== null
      ? ` (install: ${setup.allowed} allowed, ${setup.denied} denied)`
      : ''
  return `**Egress:** ${report.egress.allowed} allowed, ${report.egress.denied} denied${install ? ` for the agent${install}` : ''} · **Cost:** ${parts.join(', ')}`
}

export function metadataSection(report: Report): string {
  const rows: [string, string][] = [
    ['run', report.runId],
    ['head', report.repo.headSha ?? 'n/a'],
    ['task sha256', report.task.sha256],
    ['model', modelValue(report)],
    ['agent command', report.agent.command],
    ['diff sha256', report.diff.sha256 ?? 'n/a'],
    [
      'lockfiles',
      report.dependencies.length === 0
        ? 'none'
        : `${report.dependencies.length} hashed (report.json)`
    ]
  ]
  if (report.runner)
    rows.push([
      'runner',
      `${report.runner.os} ${report.runner.arch}, docker ${report.runner.docker.version ?? '?'}, node ${report.runner.node}`
    ])
  return (
    '<details><summary>Run</summary>\n\n| item | value |\n|---|---|\n' +
    rows.map(([k, v]) => `| ${k} | ${t(v, 300)} |`).join('\n') +
    '\n\n</details>'
  )
}
