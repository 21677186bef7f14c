// What both demos share: the project root, the engine and base image checks, and a fresh git
// repository made from the bundled fixture (git identity and config kept out of it).
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const say = (m) => process.stderr.write(`[demo] ${m}\n`)

/** Runs one of the project's scripts; exits with its status when it fails. */
export function sh(script, args = []) {
  const r = spawnSync('bash', [join(root, 'scripts', script), ...args], { stdio: 'inherit' })
  if (r.status !== 0) {
    say(`${script} failed (exit ${r.status})`)
    process.exit(r.status ?? 1)
  }
}

/** Starts the Docker engine when needed and returns the ID of the local node base image. With
 * `gvisorOptional` (a run on runc), gVisor's absence is a note, not a failure. */
export function prepareEngineAndNodeImage({ gvisorOptional = false } = {}) {
  say('checking the Docker engine...')
  sh('ensure-docker.sh', gvisorOptional ? ['--gvisor-optional'] : [])
  say('checking the demo base image (built locally when no registry is reachable)...')
  sh('prepare-images.sh', ['node'])
  return execFileSync('docker', ['image', 'inspect', '-f', '{{.Id}}', 'airlock-local/node:18'])
    .toString()
    .trim()
}

/** `.airlock-demo/` anew, with `repo/` a git repository of fixtures/demo/repo; returns the folder. */
export function freshDemoRepo() {
  const demo = join(root, '.airlock-demo')
  const repo = join(demo, 'repo')
  rmSync(demo, { recursive: true, force: true })
  mkdirSync(repo, { recursive: true })
  cpSync(join(root, 'fixtures', 'demo', 'repo'), repo, { recursive: true })
  const env = {
    ...process.env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Demo',
    GIT_AUTHOR_EMAIL: 'demo@example.invalid',
    GIT_COMMITTER_NAME: 'Demo',
    GIT_COMMITTER_EMAIL: 'demo@example.invalid'
  }
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-q', '-m', 'demo shop with a bug']
  ]) {
    execFileSync('git', args, { cwd: repo, env })
  }
  return demo
}
