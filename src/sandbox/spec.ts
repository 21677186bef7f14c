import type { ContainerCreateOptions, HostConfig } from 'dockerode'
import { LABELS, SANDBOX_PATHS } from '../plan.js'
import type { PhasePlan, RunPlan } from '../plan.js'

/** What the plan leaves open until run time: the resolved image and host paths. */
export interface PhaseResources {
  imageId: string
  /** Host folder holding the repository copy, mounted at /workspace. */
  workspaceDir: string
  /** Host file with the task text, mounted read-only at /airlock/task.md. */
  taskFile: string
  /** Values of the variables named in `env` (resolved at the edge, never in the plan). */
  env: { name: string; value: string }[]
  /** With `network: allowlist`: the run's internal network and the proxy variables. */
  egress?: { network: string; env: string[] }
  /** The phase's services network (test phases with `services`): the only network it joins. */
  services?: { network: string }
  /** Host folder mounted writable at /airlock/out (the agent phase only: usage.json). */
  outDir?: string
}

/**
 * The Docker create options of one phase's container: every hardening rule of the security model
 * in one place. Pure; the integration tests read the settings back from `inspect`.
 */
export function containerSpec(
  plan: RunPlan,
  phase: PhasePlan,
  res: PhaseResources
): ContainerCreateOptions {
  const s = plan.sandbox
  const egress = phase.network === 'allowlist' ? res.egress : undefined
  if (phase.network === 'allowlist' && egress === undefined) {
    throw new Error(`phase ${phase.name}: allowlist network without a running egress proxy`)
  }
  // allowlist: the internal network whose one peer is the proxy; services: the internal network
  // whose only peers are the phase's service containers. Never both, never anything else.
  const joined = egress?.network ?? (phase.network === 'none' ? res.services?.network : undefined)
  // Owned by the sandbox user: Docker copies the image's folder mode onto the tmpfs, which would
  // leave a root-owned 0755 /tmp unwritable.
  const [uid, gid = uid] = s.user.split(':')
  const tmpfs: Record<string, string> = {}
  for (const [target, size] of Object.entries(s.tmpfs)) {
    tmpfs[target] = `rw,noexec,nosuid,nodev,size=${size},mode=1777,uid=${uid},gid=${gid}`
  }
  return {
    name: `airlock-${plan.runId}-${phase.name}`,
    Image: res.imageId,
    Cmd: phase.command,
    Entrypoint: [],
    User: s.user,
    WorkingDir: SANDBOX_PATHS.workspace,
    Env: [
      `HOME=${SANDBOX_PATHS.tmp}`,
      `TMPDIR=${SANDBOX_PATHS.tmp}`,
      'AIRLOCK=1',
      `AIRLOCK_PHASE=${phase.name}`,
      `AIRLOCK_TASK_FILE=${SANDBOX_PATHS.task}`,
      ...(res.outDir !== undefined ? [`AIRLOCK_OUT_DIR=${SANDBOX_PATHS.out}`] : []),
      ...res.env.map((e) => `${e.name}=${e.value}`),
      ...(egress?.env ?? [])
    ],
    Labels: { ...plan.labels, [LABELS.phase]: phase.name },
    NetworkDisabled: joined === undefined,
    AttachStdin: false,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    OpenStdin: false,
    HostConfig: {
      Runtime: s.runtime,
      // allowlist: only the run's internal network, whose one reachable peer is the egress proxy.
      NetworkMode: joined ?? 'none',
      ...(joined !== undefined ? { Sysctls: { 'net.ipv6.conf.all.disable_ipv6': '1' } } : {}),
      ...hardenedHostConfig(s),
      Tmpfs: tmpfs,
      Mounts: [
        {
          Type: 'bind',
          Source: res.workspaceDir,
          Target: SANDBOX_PATHS.workspace,
          ReadOnly: !phase.workspaceWritable
        },
        { Type: 'bind', Source: res.taskFile, Target: SANDBOX_PATHS.task, ReadOnly: true },
        ...(res.outDir !== undefined
          ? [
              {
                Type: 'bind' as const,
                Source: res.outDir,
                Target: SANDBOX_PATHS.out,
                ReadOnly: false
              }
            ]
          : [])
      ]
    }
  }
}

/**
 * The hardening every container the pipeline starts shares — the sandbox phases and the egress
 * proxy alike: no privileges or capabilities, read-only root, init, memory with swap equal to it,
 * CPU and process limits, private IPC, no binds or devices beyond the caller's mounts, no log
 * driver, no core dumps.
 */
export function hardenedHostConfig(limits: {
  memoryBytes: number
  cpus: number
  pidsLimit: number
}): HostConfig {
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
