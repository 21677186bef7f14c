// `airlock plan`'s summary: what a person checks before a run, in about twenty lines. A pure
// function of the RunPlan; the whole plan is `airlock plan --json`.
import * as path from 'node:path'
import type { RunPlan } from '../plan.js'
import type { Resolution, Undecided } from '../pipeline/resolve.js'
import type { HostRule } from '../egress/host-rules.js'
import { DEFAULT_PROTECTED_PATHS } from '../path-rules.js'
import type { BaseImage } from '../sandbox/dockerfile.js'

export interface SummaryContext {
  /** Paths are shown relative to this folder when inside it. */
  cwd: string
  /** Lines about what the run will need that the plan could not check (a missing key). */
  needs?: string[]
  /** The engine's decision of the runtime, or why there is none yet. */
  resolution?: Resolution | Undecided
  /** The FROM lines of the Dockerfile to build, when it was read (how each base is pinned). */
  bases?: BaseImage[]
}

const LOCAL_ID_NOTE = "an image of this machine's engine, not pulled from a registry"

/** How the bases are pinned, in the words of each pin form (never "by digest" for an image ID). */
function pinLine(bases: BaseImage[] | undefined, allowUnpinned: boolean): string {
  if (bases === undefined)
    return allowUnpinned
      ? 'unpinned FROM accepted (allow-unpinned-base)'
      : 'every FROM pinned (by digest or by a local image ID)'
  const images = bases.filter((b) => b.pin !== 'stage' && b.pin !== 'scratch')
  if (images.length === 0) return 'no base image (FROM scratch or earlier stages only)'
  const count = (pin: BaseImage['pin']): number => images.filter((b) => b.pin === pin).length
  const digest = count('digest')
  const id = count('image-id')
  const unpinned = images.filter((b) => b.pin === 'unpinned')
  const pinned = [
    digest > 0 ? `${digest} by digest` : null,
    id > 0 ? `${id} by a local image ID (${LOCAL_ID_NOTE})` : null
  ].filter((x): x is string => x !== null)
  const unpinnedText =
    unpinned.length > 0
      ? `unpinned FROM accepted (allow-unpinned-base): ${unpinned.map((b) => b.ref).join(', ')}`
      : null
  if (unpinnedText !== null)
    return pinned.length > 0 ? `${unpinnedText}; pinned: ${pinned.join(', ')}` : unpinnedText
  if (id === 0) return 'every FROM pinned by digest'
  if (digest === 0) return `every FROM pinned by a local image ID (${LOCAL_ID_NOTE})`
  return `every FROM pinned: ${pinned.join(', ')}`
}

const LABEL = 12

function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let v = n
  let i = 0
  while (v >= 1024 && i < units.length - 1 && Number.isInteger(v / 1024)) {
    v /= 1024
    i++
  }
  if (i === 0 && n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`
  return `${v} ${units[i]}`
}

function duration(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000} min`
  return `${ms / 1000} s`
}

function host(h: HostRule): string {
  const name = h.wildcard ? `*.${h.host}` : h.host
  const ports =
    h.ports.join(',') === '443,80' || h.ports.join(',') === '80,443' ? '' : `:${h.ports.join(',')}`
  return name + ports
}

function listOf(items: string[], max: number): string {
  if (items.length <= max) return items.join(', ')
  return `${items.slice(0, max).join(', ')} and ${items.length - max} more`
}

function oneLine(command: string[], max = 72): string {
  const cmd =
    command.length === 3 && command[0] === '/bin/sh' && command[1] === '-c'
      ? command[2]
      : command.join(' ')
  const flat = cmd.replace(/\s*\n\s*/g, ' ⏎ ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

function isolationLines(plan: RunPlan, r: SummaryContext['resolution']): string[] {
  const fallback =
    plan.isolation !== null && plan.isolation.fallback !== null
      ? ` (fallback ${plan.isolation.fallback})`
      : ''
  const asked =
    plan.isolation === null
      ? `runtime ${plan.sandbox.runtime}`
      : plan.isolation.requested === 'auto'
        ? `auto: the tier is chosen from the run's risk${fallback}`
        : `tier ${plan.isolation.requested}${fallback}`
  if (r === undefined) return [asked]
  if ('undecided' in r)
    return [
      asked,
      ...(r.planned !== undefined ? [`${r.planned.tier}: ${r.planned.reasons.join('; ')}`] : []),
      r.undecided
    ]
  const d = r.isolation
  if (d !== null)
    return [
      `${d.tier} on runtime ${r.runtime}${d.fellBackFrom !== null ? ` (fallback from ${d.fellBackFrom})` : ''}: ${d.reasons.join('; ')}`
    ]
  return [`runtime ${r.runtime}${r.note !== null ? ` (${r.note})` : ''}, checked on the engine`]
}

export function planSummary(plan: RunPlan, ctx: SummaryContext): string {
  const shown = (p: string): string => {
    const rel = path.relative(ctx.cwd, p)
    return rel === '' ? '.' : rel.startsWith('..') || path.isAbsolute(rel) ? p : rel
  }
  const lines: string[] = []
  const row = (label: string, ...values: string[]): void => {
    values.forEach((v, i) => lines.push(`  ${(i === 0 ? label : '').padEnd(LABEL)}${v}`))
  }
  lines.push(`Plan of run ${plan.runId} (nothing has run; airlock plan --json prints all of it)`)
  row('repository', `${shown(plan.repo.path)} at ${plan.repo.ref}`)
  const agent = [
    plan.preset !== undefined ? `preset ${plan.preset}` : null,
    plan.model !== undefined ? `model ${plan.model}` : null
  ].filter((x): x is string => x !== null)
  const image =
    plan.image.kind === 'pinned'
      ? `pinned ${plan.image.ref}`
      : plan.image.published !== undefined
        ? `published by release ${plan.image.published.version}: pulled by digest ${plan.image.published.image}@${plan.image.published.digest} (built from the bundled Dockerfile only when this checkout differs from the release or the registry fails)`
        : `built from ${
            plan.preset !== undefined &&
            plan.image.dockerfile.endsWith(path.join('images', 'agents', plan.preset, 'Dockerfile'))
              ? `the ${plan.preset} preset's bundled Dockerfile`
              : `${shown(plan.image.dockerfile)} (context ${shown(plan.image.context)})`
          }; ${pinLine(ctx.bases, plan.image.allowUnpinnedBase)}`
  row('image', image, ...(agent.length > 0 ? [agent.join(', ')] : []))
  row('isolation', ...isolationLines(plan, ctx.resolution))
  if (plan.sandbox.network === 'none') row('network', 'none: the agent reaches nothing')
  else {
    const e = plan.egress
    const hosts = e?.allowHosts.map(host) ?? []
    row(
      'network',
      `allowlist through the egress proxy: ${hosts.length > 0 ? listOf(hosts, 6) : e !== undefined && e.credentials.length > 0 ? 'only the model routes below' : 'no host'}`,
      ...(e !== undefined && e.credentials.length > 0
        ? [
            `model routes: ${e.credentials.map((c) => `${c.name} → ${c.upstream} (key from $${c.secretEnv})`).join(', ')}`
          ]
        : []),
      ...(e !== undefined &&
      (e.budget.maxRequests !== undefined ||
        e.budget.maxTokens !== undefined ||
        e.budget.maxCostUsd !== undefined)
        ? [
            `budget: ${[
              e.budget.maxRequests !== undefined ? `${e.budget.maxRequests} requests` : null,
              e.budget.maxTokens !== undefined ? `${e.budget.maxTokens} tokens` : null,
              e.budget.maxCostUsd !== undefined ? `$${e.budget.maxCostUsd}` : null
            ]
              .filter(Boolean)
              .join(', ')}`
          ]
        : [])
    )
  }
  const phase = plan.phases[0]
  row(
    'phases',
    ...plan.phases.map((p) => {
      const net =
        p.name === 'setup' && plan.setup !== undefined && plan.setup.allowHosts.length > 0
          ? ` [network: ${listOf(plan.setup.allowHosts.map(host), 4)}]`
          : p.network !== 'none'
            ? ` [network: ${p.network}]`
            : ''
      return `${p.name.padEnd(9)}${oneLine(p.command)}${net}`
    }),
    ...(phase !== undefined
      ? [
          `each at most ${duration(phase.timeoutMs)}, then SIGTERM and ${duration(phase.graceMs)} before SIGKILL`
        ]
      : [])
  )
  if (plan.services.length > 0)
    row('services', plan.services.map((s) => `${s.name} (${s.image})`).join(', '))
  const s = plan.sandbox
  row(
    'limits',
    `memory ${bytes(s.memoryBytes)} · cpus ${s.cpus} · processes ${s.pidsLimit} · writes ${bytes(s.workspace.sizeBytes)} · user ${s.user}`,
    'read-only root, all capabilities dropped, no new privileges'
  )
  const protectedNote =
    plan.policy.protectedPaths.length === DEFAULT_PROTECTED_PATHS.length &&
    plan.policy.protectedPaths.every((p, i) => p === DEFAULT_PROTECTED_PATHS[i])
      ? `${plan.policy.protectedPaths.length} default patterns (CI, build and policy files)`
      : plan.policy.protectedPaths.length === 0
        ? 'none'
        : `${plan.policy.protectedPaths.length} patterns`
  row(
    'changes',
    `allowed: ${plan.policy.allowedPaths.length > 0 ? listOf(plan.policy.allowedPaths, 5) : 'anywhere'} · protected (need approval): ${protectedNote}`,
    `report lists up to ${plan.policy.maxChangedFiles} files, diff up to ${bytes(plan.policy.maxDiffBytes)}; more is a violation`
  )
  row(
    'captured',
    `${shown(plan.outputDir)}/: report, diff, phase logs (up to ${bytes(plan.capture.maxLogBytes)} each)${plan.capture.testReports.length > 0 ? `, test reports ${listOf(plan.capture.testReports, 4)}` : ''}${plan.egress !== undefined ? ', egress log' : ''}`
  )
  row(
    'task',
    plan.task.source === 'file'
      ? `file ${plan.task.file ?? ''} (${plan.task.bytes} bytes)`
      : plan.task.bytes === 0
        ? 'none given (the agent gets an empty task file)'
        : `text, ${plan.task.bytes} bytes`
  )
  if (plan.env.length > 0) row('env', listOf(plan.env, 8))
  const pf = plan.policyFile
  row(
    'policy file',
    pf.base === null
      ? `none read: no --policy-base given (${pf.path} is read only from a base commit)`
      : pf.blobSha === null
        ? `none: ${pf.base} has no ${pf.path}`
        : `${pf.path} at ${pf.base}${pf.commit !== null ? ` (${pf.commit.slice(0, 12)})` : ''}: sets ${pf.settings.length > 0 ? pf.settings.join(', ') : 'nothing'}${pf.overridden.length > 0 ? `; flags override ${pf.overridden.join(', ')}` : ''}`
  )
  if (ctx.needs !== undefined && ctx.needs.length > 0) row('needs', ...ctx.needs)
  return lines.join('\n') + '\n'
}
