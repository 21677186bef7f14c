import { LABELS } from '../labels.js'
import { SANDBOX_PATHS } from '../plan.js'
import type { PhasePlan, RunPlan } from '../plan.js'
import type { ContainerSpec } from './types.js'

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
  /**
   * The dependency cache (docs/setup.md): mounted writable at /airlock/cache with the package
   * managers' variables, into the install phase only; any other phase refuses it.
   */
  cache?: { dir: string; target: string; env: readonly string[] }
}

/**
 * The test command's phases have no network: their package managers fail at once instead of
 * retrying a registry for minutes (npm, pnpm, yarn 1 and 2+, pip, uv; docs/setup.md). A variable of
 * the run's `env` with the same name replaces one of these.
 */
export const OFFLINE_ENV: readonly string[] = [
  'npm_config_offline=true',
  'npm_config_fetch_retries=0',
  'npm_config_audit=false',
  'npm_config_fund=false',
  'npm_config_update_notifier=false',
  'NO_UPDATE_NOTIFIER=1',
  'YARN_ENABLE_NETWORK=0',
  'YARN_HTTP_RETRY=0',
  'yarn_offline=true',
  'PIP_NO_INDEX=1',
  'PIP_RETRIES=0',
  'PIP_DISABLE_PIP_VERSION_CHECK=1',
  'UV_OFFLINE=1'
]

/**
 * The install phase asks the registry for nothing but packages: no audit, no funding notice, no
 * update check (a warm install then makes no registry request; docs/setup.md).
 */
export const INSTALL_ENV: readonly string[] = [
  'npm_config_audit=false',
  'npm_config_fund=false',
  'npm_config_update_notifier=false',
  'NO_UPDATE_NOTIFIER=1'
]

/**
 * The container of one phase, in the runtime's terms. Pure; the backend adds the hardening every
 * container shares (src/sandbox/docker/create.ts), and the integration tests read it back.
 */
export function containerSpec(plan: RunPlan, phase: PhasePlan, res: PhaseResources): ContainerSpec {
  const s = plan.sandbox
  const egress = phase.network === 'allowlist' ? res.egress : undefined
  if (phase.network === 'allowlist' && egress === undefined) {
    throw new Error(`phase ${phase.name}: allowlist network without a running egress proxy`)
  }
  // allowlist: the internal network whose one peer is the proxy; services: the internal network
  // whose only peers are the phase's service containers. Never both, never anything else.
  if (res.cache !== undefined && phase.name !== 'setup')
    throw new Error(
      `phase ${phase.name}: the dependency cache is mounted into the install phase only`
    )
  const joined = egress?.network ?? (phase.network === 'none' ? res.services?.network : undefined)
  return {
    name: `airlock-${plan.runId}-${phase.name}`,
    image: res.imageId,
    command: phase.command,
    user: s.user,
    workdir: SANDBOX_PATHS.workspace,
    env: [
      `HOME=${SANDBOX_PATHS.tmp}`,
      `TMPDIR=${SANDBOX_PATHS.tmp}`,
      'AIRLOCK=1',
      `AIRLOCK_PHASE=${phase.name}`,
      `AIRLOCK_TASK_FILE=${SANDBOX_PATHS.task}`,
      ...(res.outDir !== undefined ? [`AIRLOCK_OUT_DIR=${SANDBOX_PATHS.out}`] : []),
      ...(phase.name === 'tests' || phase.name === 'baseline'
        ? OFFLINE_ENV.filter((v) => !res.env.some((e) => v.startsWith(`${e.name}=`)))
        : []),
      ...(phase.name === 'setup' ? INSTALL_ENV : []),
      ...res.env.map((e) => `${e.name}=${e.value}`),
      ...(res.cache?.env ?? []),
      ...(egress?.env ?? [])
    ],
    labels: { ...plan.labels, [LABELS.phase]: phase.name },
    // allowlist: only the run's internal network, whose one reachable peer is the egress proxy.
    network: joined !== undefined ? { name: joined } : null,
    ...(joined !== undefined ? { sysctls: { 'net.ipv6.conf.all.disable_ipv6': '1' } } : {}),
    // A container without a network keeps gVisor's entry without a network stack (resolve.ts).
    runtime: joined === undefined ? (s.offlineRuntime ?? s.runtime) : s.runtime,
    limits: { memoryBytes: s.memoryBytes, cpus: s.cpus, pidsLimit: s.pidsLimit },
    tmpfs: { ...s.tmpfs },
    mounts: [
      {
        source: res.workspaceDir,
        target: SANDBOX_PATHS.workspace,
        readOnly: !phase.workspaceWritable
      },
      { source: res.taskFile, target: SANDBOX_PATHS.task, readOnly: true },
      ...(res.outDir !== undefined
        ? [{ source: res.outDir, target: SANDBOX_PATHS.out, readOnly: false }]
        : []),
      ...(res.cache !== undefined
        ? [{ source: res.cache.dir, target: res.cache.target, readOnly: false }]
        : [])
    ]
  }
}
