/**
 * Containers with a Docker engine of their own inside (Docker-in-Docker) on the machine's engine,
 * for the tests of a fresh machine and of Actions Runner Controller's dind layout.
 *
 * `--privileged` cannot be granted on every machine (it asks for every capability, and some
 * hosts withhold one, e.g. CAP_SYS_RESOURCE); these flags give what an inner dockerd needs:
 * every other capability, no seccomp/AppArmor filter, writable /proc and /sys paths, the host's
 * cgroup tree, /dev, and an anonymous volume for the inner engine's storage (overlay on overlay
 * fails). The inner engine's containers get a cgroup parent of their own (never the outer
 * daemon's `docker/`), its storage is that volume, its socket stays inside: the outer engine's
 * state is not touched, and `remove` deletes the volume with the container.
 */
import { spawn, spawnSync } from 'node:child_process'
import * as fs from 'node:fs'
import { randomBytes } from 'node:crypto'

export const DIND_FLAGS = [
  '--cap-add',
  'ALL',
  '--cap-drop',
  'SYS_RESOURCE',
  '--security-opt',
  'seccomp=unconfined',
  '--security-opt',
  'apparmor=unconfined',
  '--security-opt',
  'systempaths=unconfined',
  '--cgroupns=host',
  '-v',
  '/sys/fs/cgroup:/sys/fs/cgroup:rw',
  '-v',
  '/dev:/dev',
  '-v',
  '/var/lib/docker'
]

/** A name unique to this run, for containers, networks, volumes and cgroup parents. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${randomBytes(3).toString('hex')}`
}

/** An inner engine's daemon.json: its containers' cgroups under a parent of their own. */
export function innerDaemonJson(cgroupParent: string): string {
  return JSON.stringify({ 'cgroup-parent': cgroupParent }) + '\n'
}

export interface Exec {
  status: number | null
  output: string
}

/** Runs `docker ARGS` asynchronously (servers in this process keep answering); stdout and
 * stderr together, in order. */
export function docker(args: string[], input?: string): Promise<Exec> {
  return new Promise((resolve) => {
    const child = spawn('docker', args, {
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe']
    })
    let output = ''
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (output += d))
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (output += d))
    if (input !== undefined && child.stdin) child.stdin.end(input)
    child.on('close', (status) => resolve({ status, output }))
  })
}

/** Stops what an inner engine runs, then removes the container and its anonymous volumes, and
 * the inner engine's (empty) cgroup parent folders. Best effort: for afterAll. */
export async function removeDind(container: string, cgroupParent?: string): Promise<void> {
  await docker([
    'exec',
    container,
    'sh',
    '-c',
    'if docker info >/dev/null 2>&1; then docker ps -aq | xargs -r docker rm -f >/dev/null; fi; ' +
      'if [ -f /var/run/docker.pid ]; then kill "$(cat /var/run/docker.pid)" 2>/dev/null; sleep 2; fi; true'
  ])
  spawnSync('docker', ['rm', '-f', '-v', container], { stdio: 'ignore' })
  if (cgroupParent === undefined) return
  const root = '/sys/fs/cgroup'
  const dirs = fs.existsSync(`${root}/${cgroupParent}`)
    ? [`${root}/${cgroupParent}`]
    : fs
        .readdirSync(root)
        .map((c) => `${root}/${c}/${cgroupParent}`)
        .filter((d) => fs.existsSync(d))
  for (const dir of dirs) {
    try {
      fs.rmdirSync(dir)
    } catch {
      // not empty or already gone: left for the kernel's own cleanup of the host
    }
  }
}
