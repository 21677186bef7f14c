// Names and labels as Kubernetes accepts them: object names are DNS-1123 labels (at most 63
// characters), label values at most 63 characters starting and ending with a letter or digit.
// Pure; the same input gives the same name, so cleanup finds by label what the run created.
import { createHash } from 'node:crypto'

const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/
const DNS_LABEL = /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$/

function hash(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length)
}

/** A label value: the value itself when Kubernetes accepts it, else a stable hash of it. */
export function labelValue(value: string): string {
  return LABEL_VALUE.test(value) ? value : `h-${hash(value, 40)}`
}

/** The run's labels (and any others) as label values Kubernetes accepts. */
export function kubeLabels(labels: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(labels)) out[k] = labelValue(v)
  return out
}

/**
 * An object name (DNS-1123 label) for a container or network name of the run: lower case, other
 * characters as `-`, and when that changed or shortened it, a hash of the original at the end.
 */
export function objectName(name: string): string {
  const lowered = name.toLowerCase().replace(/[^a-z0-9-]+/g, '-')
  const trimmed = lowered.replace(/^-+/, '').replace(/-+$/, '')
  if (trimmed === name && DNS_LABEL.test(trimmed)) return trimmed
  const head = trimmed.slice(0, 50).replace(/-+$/, '')
  return `${head === '' ? 'x' : head}-${hash(name, 12)}`
}

/** The label a pod carries for each network of the run it joins (its NetworkPolicy selects it). */
export function networkLabel(network: string): string {
  return `dev.airlock.net-${hash(network, 16)}`
}

/** The label naming one pod (its Service selects it). */
export const POD_LABEL = 'dev.airlock.pod'
