// The pure mapping of the runtime boundary's specs to Kubernetes manifests: a Pod per phase or
// sidecar, a NetworkPolicy per network of the run (and one that denies everything else), a
// headless Service per name a sidecar answers to. Every hardening rule of the security model is
// written here once; `hardeningViolations` (hardening.ts) checks each manifest before it is sent.
import * as path from 'node:path'
// Kubernetes' own types as they travel (type-only: nothing of the package is bundled).
import type {
  IContainer as V1Container,
  IPod as V1Pod,
  ISecurityContext as V1SecurityContext,
  IService as V1Service,
  IVolume as V1Volume,
  IVolumeMount as V1VolumeMount
} from 'kubernetes-models/v1'
import type { INetworkPolicy as V1NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1'
import { LABELS } from '../../labels.js'
import type { ContainerSpec, SidecarSpec } from '../types.js'
import { POD_LABEL, kubeLabels, labelValue, networkLabel, objectName } from './names.js'

/** Where the helper containers see the pod's copied folders. */
export const IO_ROOT = '/airlock-io'
/** The init container that unpacks the copied folders from the tar streamed to its stdin. */
export const COPY_IN = 'copy-in'
/** The container that stays up after the phase so its writable folders can be read back (exec tar). */
export const COPY_OUT = 'copy-out'
/** The phase's own container. */
export const MAIN = 'main'

/** Small fixed limits of the copy containers (tar streams; it needs little). */
const COPY_LIMITS = { memory: String(128 * 1024 * 1024), cpu: '250m' }

/** Where the backend puts a run's objects, and what the cluster decides (the RuntimeClass). */
export interface PodTarget {
  namespace: string
  /** The RuntimeClass of the isolation tier; null: the cluster's default runtime (runc). */
  runtimeClassName: string | null
  /** The pod's own deadline (`activeDeadlineSeconds`): the phase's timeout plus its grace. */
  deadlineSeconds: number
  terminationGraceSeconds: number
  /** Bound of every copied folder (`workspace-size`). */
  copySizeBytes: number
  /** Names of the peers on the pod's networks → their addresses (written to /etc/hosts). */
  hostAliases: { ip: string; hostnames: string[] }[]
}

/** A host folder or file of the spec's mounts, as the pod sees it. */
export interface CopiedMount {
  /** Index of the volume (`io-<n>`) and of its folder in the copy tar (`<n>/...`). */
  index: number
  target: string
  readOnly: boolean
  /** The host path is a file: the volume holds it under this name, mounted with subPath. */
  file?: string
}

/** The spec's mounts as copied volumes; `isFile(source)` tells files from folders. */
export function copiedMounts(
  spec: ContainerSpec,
  isFile: (source: string) => boolean
): CopiedMount[] {
  return spec.mounts.map((m, index) => ({
    index,
    target: m.target,
    readOnly: m.readOnly,
    ...(isFile(m.source) ? { file: path.basename(m.source) } : {})
  }))
}

function userIds(user: string): { uid: number; gid: number } {
  const [u, g = u] = user.split(':')
  const uid = Number(u)
  const gid = Number(g)
  if (!Number.isInteger(uid) || !Number.isInteger(gid) || uid <= 0 || gid < 0) {
    throw new Error(`user "${user}" is not a numeric non-root uid:gid`)
  }
  return { uid, gid }
}

/** The securityContext of every container: the Docker backend's hardening in Kubernetes' words. */
export function containerSecurity(user: string): V1SecurityContext {
  const { uid, gid } = userIds(user)
  return {
    runAsUser: uid,
    runAsGroup: gid,
    runAsNonRoot: true,
    privileged: false,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
    procMount: 'Default'
  }
}

function quantityCpu(cpus: number): string {
  return `${Math.max(1, Math.round(cpus * 1000))}m`
}

function envOf(env: string[]): { name: string; value: string }[] {
  return env.map((e) => {
    const eq = e.indexOf('=')
    return eq < 0 ? { name: e, value: '' } : { name: e.slice(0, eq), value: e.slice(eq + 1) }
  })
}

/** The run's labels, the pod's own name and its networks' membership labels. */
function podLabels(spec: ContainerSpec | SidecarSpec, name: string): Record<string, string> {
  const labels: Record<string, string> = { ...kubeLabels(spec.labels), [POD_LABEL]: name }
  for (const n of networksOf(spec)) labels[networkLabel(n.name)] = 'member'
  return labels
}

/** Every network a container joins (its own, and a sidecar's extra ones). */
export function networksOf(
  spec: ContainerSpec | SidecarSpec
): { name: string; aliases: string[] }[] {
  const out: { name: string; aliases: string[] }[] = []
  if (spec.network !== null)
    out.push({ name: spec.network.name, aliases: spec.network.aliases ?? [] })
  if ('networks' in spec) for (const n of spec.networks ?? []) out.push(n)
  return out
}

/**
 * The Pod of one phase or sidecar: `restartPolicy: Never`, the RuntimeClass of the tier, no
 * service-account token, no host namespaces, no service links, a non-root user, no capabilities,
 * no privilege escalation, read-only root, seccomp RuntimeDefault, limits from the spec, its own
 * deadline, memory-backed `emptyDir`s with a size limit for the scratch folders, and the host
 * folders of the spec copied in by an init container (and read back from a helper that stays).
 */
export function podManifest(
  spec: ContainerSpec | SidecarSpec,
  target: PodTarget,
  mounts: CopiedMount[]
): V1Pod {
  const name = objectName(spec.name)
  const security = containerSecurity(spec.user)
  const { gid } = userIds(spec.user)
  const stdin = 'stdin' in spec && spec.stdin === true
  const volumes: V1Volume[] = []
  const mainMounts: V1VolumeMount[] = []
  Object.entries(spec.tmpfs).forEach(([dir, size], i) => {
    volumes.push({ name: `scratch-${i}`, emptyDir: { medium: 'Memory', sizeLimit: String(size) } })
    mainMounts.push({ name: `scratch-${i}`, mountPath: dir })
  })
  for (const m of mounts) {
    volumes.push({ name: `io-${m.index}`, emptyDir: { sizeLimit: String(target.copySizeBytes) } })
    mainMounts.push({
      name: `io-${m.index}`,
      mountPath: m.target,
      readOnly: m.readOnly,
      ...(m.file !== undefined ? { subPath: m.file } : {})
    })
  }
  const memory = String(spec.limits.memoryBytes)
  const cpu = quantityCpu(spec.limits.cpus)
  const main: V1Container = {
    name: MAIN,
    image: spec.image,
    command: spec.command,
    workingDir: spec.workdir,
    env: envOf(spec.env),
    securityContext: security,
    resources: { limits: { memory, cpu }, requests: { memory, cpu } },
    volumeMounts: mainMounts,
    stdin,
    stdinOnce: stdin,
    tty: false,
    terminationMessagePolicy: 'File',
    imagePullPolicy: 'IfNotPresent'
  }
  const copyResources = { limits: { ...COPY_LIMITS }, requests: { ...COPY_LIMITS } }
  const ioMounts = (onlyWritable: boolean): V1VolumeMount[] =>
    mounts
      .filter((m) => !onlyWritable || !m.readOnly)
      .map((m) => ({
        name: `io-${m.index}`,
        mountPath: `${IO_ROOT}/${m.index}`,
        readOnly: onlyWritable
      }))
  const initContainers: V1Container[] =
    mounts.length === 0
      ? []
      : [
          {
            name: COPY_IN,
            image: spec.image,
            command: ['tar', '-x', '-f', '-', '-C', IO_ROOT],
            workingDir: '/',
            securityContext: security,
            resources: copyResources,
            volumeMounts: [...ioMounts(false), { name: 'io-root', mountPath: IO_ROOT }],
            stdin: true,
            stdinOnce: true,
            tty: false,
            imagePullPolicy: 'IfNotPresent'
          }
        ]
  if (mounts.length > 0)
    volumes.push({ name: 'io-root', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } })
  const writable = mounts.some((m) => !m.readOnly)
  const containers: V1Container[] = [main]
  if (writable) {
    containers.push({
      name: COPY_OUT,
      image: spec.image,
      // Stays up (bounded by the pod's deadline) so the writable folders can be read back.
      command: ['sleep', String(target.deadlineSeconds + target.terminationGraceSeconds + 600)],
      workingDir: '/',
      securityContext: security,
      resources: copyResources,
      volumeMounts: [...ioMounts(true), { name: 'io-root', mountPath: IO_ROOT, readOnly: true }],
      tty: false,
      imagePullPolicy: 'IfNotPresent'
    })
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: target.namespace,
      labels: podLabels(spec, name),
      annotations: { 'dev.airlock.name': spec.name }
    },
    spec: {
      restartPolicy: 'Never',
      ...(target.runtimeClassName !== null ? { runtimeClassName: target.runtimeClassName } : {}),
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      hostNetwork: false,
      hostPID: false,
      hostIPC: false,
      shareProcessNamespace: false,
      activeDeadlineSeconds: target.deadlineSeconds,
      terminationGracePeriodSeconds: target.terminationGraceSeconds,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: security.runAsUser,
        runAsGroup: gid,
        fsGroup: gid,
        seccompProfile: { type: 'RuntimeDefault' }
      },
      ...(target.hostAliases.length > 0 ? { hostAliases: target.hostAliases } : {}),
      ...(initContainers.length > 0 ? { initContainers } : {}),
      containers,
      volumes
    }
  }
}

/** The policy every run starts with: its pods get no traffic in or out but what another allows. */
export function denyAllPolicy(
  runId: string,
  namespace: string,
  labels: Record<string, string>
): V1NetworkPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name: objectName(`airlock-${runId}-deny-all`),
      namespace,
      labels: kubeLabels(labels)
    },
    spec: {
      podSelector: { matchLabels: { [LABELS.runId]: labelValue(runId) } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: []
    }
  }
}

/**
 * A network of the run as a policy over its members. Internal: members reach each other and
 * nothing else (the agent reaches only the proxy; the tests only their services). Not internal
 * (the proxy's upstream side): members may open connections out, and nothing comes in.
 */
export function networkPolicy(
  spec: { name: string; labels: Record<string, string>; internal: boolean },
  runId: string,
  namespace: string
): V1NetworkPolicy {
  const member = {
    matchLabels: { [LABELS.runId]: labelValue(runId), [networkLabel(spec.name)]: 'member' }
  }
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name: objectName(spec.name),
      namespace,
      labels: kubeLabels(spec.labels),
      annotations: { 'dev.airlock.name': spec.name }
    },
    spec: {
      podSelector: member,
      policyTypes: ['Ingress', 'Egress'],
      ingress: spec.internal ? [{ from: [{ podSelector: member }] }] : [],
      egress: spec.internal
        ? [{ to: [{ podSelector: member }] }]
        : [{ to: [{ ipBlock: { cidr: '0.0.0.0/0' } }, { ipBlock: { cidr: '::/0' } }] }]
    }
  }
}

/**
 * A headless Service for a name a sidecar answers to on one network (the proxy's name, a
 * service's): it selects that one pod. Callers reach it through /etc/hosts (`hostAliases`), so
 * no pod of the run needs the cluster's DNS.
 */
export function serviceManifest(
  sidecar: SidecarSpec | ContainerSpec,
  network: string,
  alias: string,
  namespace: string
): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: objectName(`${sidecar.name}-${alias}`),
      namespace,
      labels: kubeLabels(sidecar.labels),
      annotations: { 'dev.airlock.alias': alias, 'dev.airlock.network': network }
    },
    spec: {
      clusterIP: 'None',
      selector: { [POD_LABEL]: objectName(sidecar.name) },
      publishNotReadyAddresses: true
    }
  }
}
