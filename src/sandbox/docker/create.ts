import type { ContainerCreateOptions, HostConfig } from 'dockerode'
import type { ContainerSpec, ResourceLimits, SidecarSpec } from '../types.js'

/**
 * The Docker create options of a container: every hardening rule of the security model in one
 * place, shared by the sandbox phases and the sidecars (the egress proxy). Pure.
 */
export function createOptions(spec: ContainerSpec | SidecarSpec): ContainerCreateOptions {
  const stdin = 'stdin' in spec && spec.stdin === true
  // Owned by the container user: Docker copies the image's folder mode onto the tmpfs, which
  // would leave a root-owned 0755 /tmp unwritable.
  const [uid, gid = uid] = spec.user.split(':')
  const tmpfs: Record<string, string> = {}
  for (const [target, size] of Object.entries(spec.tmpfs)) {
    tmpfs[target] = `rw,noexec,nosuid,nodev,size=${size},mode=1777,uid=${uid},gid=${gid}`
  }
  return {
    name: spec.name,
    Image: spec.image,
    Cmd: spec.command,
    Entrypoint: [],
    User: spec.user,
    WorkingDir: spec.workdir,
    Env: spec.env,
    Labels: spec.labels,
    NetworkDisabled: spec.network === null,
    AttachStdin: stdin,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    OpenStdin: stdin,
    StdinOnce: stdin,
    HostConfig: {
      ...(spec.runtime !== undefined ? { Runtime: spec.runtime } : {}),
      NetworkMode: spec.network?.name ?? 'none',
      ...(spec.sysctls ? { Sysctls: spec.sysctls } : {}),
      ...hardenedHostConfig(spec.limits),
      Tmpfs: tmpfs,
      Mounts: spec.mounts.map((m) => ({
        Type: 'bind' as const,
        Source: m.source,
        Target: m.target,
        ReadOnly: m.readOnly
      }))
    }
  }
}

/**
 * The hardening every container shares: no privileges or capabilities, read-only root, init,
 * memory with swap equal to it, CPU and process limits, private IPC, no binds or devices beyond
 * the spec's mounts, no log driver, no core dumps.
 */
export function hardenedHostConfig(limits: ResourceLimits): HostConfig {
  return {
    Privileged: false,
    ReadonlyRootfs: true,
    CapDrop: ['ALL'],
    CapAdd: [],
    SecurityOpt: ['no-new-privileges:true'],
    Init: true,
    Memory: limits.memoryBytes,
    MemorySwap: limits.memoryBytes,
    NanoCpus: Math.round(limits.cpus * 1e9),
    PidsLimit: limits.pidsLimit,
    IpcMode: 'private',
    PidMode: '',
    UTSMode: '',
    UsernsMode: '',
    Binds: [],
    Devices: [],
    AutoRemove: false,
    LogConfig: { Type: 'none', Config: {} },
    RestartPolicy: { Name: 'no' },
    Ulimits: [{ Name: 'core', Soft: 0, Hard: 0 }]
  }
}
