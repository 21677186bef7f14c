// The comment's sections about the run itself: the sandbox it ran in, its cost and its metadata.
import type { Report } from '../report.js'
import { bytes, t } from './text.js'

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
  if (c.usd !== null) parts.push(`$${c.usd.toFixed(4)} (as reported by the agent)`)
  return `**Egress:** ${report.egress.allowed} allowed, ${report.egress.denied} denied · **Cost:** ${parts.join(', ')}`
}

export function metadataSection(report: Report): string {
  const rows: [string, string][] = [
    ['run', report.runId],
    ['head', report.repo.headSha ?? 'n/a'],
    ['task sha256', report.task.sha256],
    ['model', report.agent.model ?? 'n/a'],
    ['model (usage.json)', report.cost.tokens?.model ?? 'n/a'],
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
    '<details><summary>Run</summary>\n\n| | |\n|---|---|\n' +
    rows.map(([k, v]) => `| ${k} | ${t(v, 300)} |`).join('\n') +
    '\n\n</details>'
  )
}
