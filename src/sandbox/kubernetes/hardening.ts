// The security model, rule by rule, as a check of a manifest: the backend runs it on every Pod and
// NetworkPolicy before sending it, and refuses to send one that breaks a rule. Pure.
import type { IContainer, IPod } from 'kubernetes-models/v1'
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1'
import { LABELS } from '../../labels.js'

/** `name@sha256:<64 hex>`: the only image reference a pod of this backend may name. */
export const PINNED_IMAGE = /^[^\s@]+@sha256:[a-f0-9]{64}$/

/** The rules a Pod must keep; each message names the field and what it must be. */
export function podViolations(pod: IPod): string[] {
  const out: string[] = []
  const spec = pod.spec
  const where = `pod ${pod.metadata?.name ?? '?'}`
  if (spec === undefined) return [`${where}: no spec`]
  const labels = pod.metadata?.labels ?? {}
  if (!labels[LABELS.runId])
    out.push(
      `${where}: metadata.labels["${LABELS.runId}"] is missing (cleanup finds the run's objects by it)`
    )
  if (labels[LABELS.managed] !== 'true')
    out.push(`${where}: metadata.labels["${LABELS.managed}"] must be "true"`)
  if (spec.restartPolicy !== 'Never') out.push(`${where}: spec.restartPolicy must be Never`)
  if (spec.automountServiceAccountToken !== false)
    out.push(
      `${where}: spec.automountServiceAccountToken must be false (no service-account token in the sandbox)`
    )
  if (spec.enableServiceLinks !== false)
    out.push(
      `${where}: spec.enableServiceLinks must be false (no addresses of the namespace's services in the environment)`
    )
  for (const k of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
    if (spec[k] !== false) out.push(`${where}: spec.${k} must be false`)
  }
  if (spec.shareProcessNamespace === true)
    out.push(`${where}: spec.shareProcessNamespace must not be true`)
  if (!(typeof spec.activeDeadlineSeconds === 'number' && spec.activeDeadlineSeconds > 0))
    out.push(`${where}: spec.activeDeadlineSeconds must be set (the pod's own deadline)`)
  if (spec.ephemeralContainers !== undefined && spec.ephemeralContainers.length > 0)
    out.push(`${where}: spec.ephemeralContainers must be empty`)
  const podSec = spec.securityContext ?? {}
  if (podSec.runAsNonRoot !== true)
    out.push(`${where}: spec.securityContext.runAsNonRoot must be true`)
  if (podSec.seccompProfile?.type !== 'RuntimeDefault')
    out.push(`${where}: spec.securityContext.seccompProfile.type must be RuntimeDefault`)
  for (const v of spec.volumes ?? []) {
    const kinds = Object.keys(v).filter((k) => k !== 'name')
    if (kinds.length !== 1 || kinds[0] !== 'emptyDir') {
      out.push(
        `${where}: volume ${v.name} must be an emptyDir (found ${kinds.join(', ') || 'nothing'}): no host path, no claim, no projected token`
      )
    } else if (v.emptyDir?.sizeLimit === undefined) {
      out.push(`${where}: volume ${v.name} must have emptyDir.sizeLimit`)
    }
  }
  const containers: [string, IContainer][] = [
    ...(spec.initContainers ?? []).map((c): [string, IContainer] => [
      `initContainers ${c.name}`,
      c
    ]),
    ...spec.containers.map((c): [string, IContainer] => [`containers ${c.name}`, c])
  ]
  for (const [label, c] of containers) out.push(...containerViolations(`${where} ${label}`, c))
  return out
}

function containerViolations(where: string, c: IContainer): string[] {
  const out: string[] = []
  const sec = c.securityContext ?? {}
  if (!PINNED_IMAGE.test(c.image ?? ''))
    out.push(`${where}: image "${c.image ?? ''}" must be pinned by digest (name@sha256:...)`)
  if (sec.runAsNonRoot !== true) out.push(`${where}: securityContext.runAsNonRoot must be true`)
  if (!(typeof sec.runAsUser === 'number' && sec.runAsUser > 0))
    out.push(`${where}: securityContext.runAsUser must be a non-root uid`)
  if (sec.privileged !== false) out.push(`${where}: securityContext.privileged must be false`)
  if (sec.allowPrivilegeEscalation !== false)
    out.push(`${where}: securityContext.allowPrivilegeEscalation must be false`)
  if (sec.readOnlyRootFilesystem !== true)
    out.push(`${where}: securityContext.readOnlyRootFilesystem must be true`)
  if (!(sec.capabilities?.drop ?? []).includes('ALL'))
    out.push(`${where}: securityContext.capabilities.drop must contain ALL`)
  if ((sec.capabilities?.add ?? []).length > 0)
    out.push(`${where}: securityContext.capabilities.add must be empty`)
  if (sec.seccompProfile?.type !== 'RuntimeDefault')
    out.push(`${where}: securityContext.seccompProfile.type must be RuntimeDefault`)
  if (sec.procMount !== undefined && sec.procMount !== 'Default')
    out.push(`${where}: securityContext.procMount must be Default`)
  const limits = c.resources?.limits ?? {}
  if (limits.memory === undefined) out.push(`${where}: resources.limits.memory must be set`)
  if (limits.cpu === undefined) out.push(`${where}: resources.limits.cpu must be set`)
  for (const p of c.ports ?? [])
    if (p.hostPort !== undefined) out.push(`${where}: ports must not use hostPort`)
  for (const m of c.volumeMounts ?? [])
    if (m.mountPropagation !== undefined && m.mountPropagation !== 'None')
      out.push(`${where}: volumeMounts ${m.name} must not propagate mounts`)
  return out
}

/**
 * The rules a NetworkPolicy of a run keeps: it selects only the run's pods, restricts both
 * directions, lets traffic in only from the run's pods, and lets traffic out only to the run's
 * pods or (the proxy's upstream side) to addresses, never to other pods of the cluster.
 */
export function policyViolations(policy: INetworkPolicy, runLabel: string): string[] {
  const out: string[] = []
  const where = `networkpolicy ${policy.metadata?.name ?? '?'}`
  const spec = policy.spec
  if (spec === undefined) return [`${where}: no spec`]
  if (spec.podSelector?.matchLabels?.[LABELS.runId] !== runLabel)
    out.push(`${where}: spec.podSelector must select the run's pods by ${LABELS.runId}`)
  const types = spec.policyTypes ?? []
  if (!types.includes('Ingress') || !types.includes('Egress'))
    out.push(`${where}: spec.policyTypes must be [Ingress, Egress]`)
  for (const rule of spec.ingress ?? []) {
    const from = rule.from ?? []
    if (from.length === 0) out.push(`${where}: an ingress rule without "from" admits everyone`)
    for (const peer of from) {
      if (peer.ipBlock !== undefined || peer.namespaceSelector !== undefined)
        out.push(`${where}: ingress may come only from the run's pods`)
      else if (peer.podSelector?.matchLabels?.[LABELS.runId] !== runLabel)
        out.push(`${where}: ingress podSelector must select the run's pods`)
    }
  }
  for (const rule of spec.egress ?? []) {
    const to = rule.to ?? []
    if (to.length === 0) out.push(`${where}: an egress rule without "to" lets everything out`)
    for (const peer of to) {
      if (peer.namespaceSelector !== undefined)
        out.push(`${where}: egress may not name other namespaces`)
      if (
        peer.podSelector !== undefined &&
        peer.podSelector.matchLabels?.[LABELS.runId] !== runLabel
      )
        out.push(`${where}: egress podSelector must select the run's pods`)
    }
  }
  return out
}
