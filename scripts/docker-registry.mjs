// Debian's `docker-registry` on loopback, for the tests and the benchmarks that need a real
// registry (images pinned by digest, pulled and pushed) without reaching any outside one.
import { spawn } from 'node:child_process'
import * as fs from 'node:fs'
import * as net from 'node:net'
import * as path from 'node:path'

/** A free TCP port on loopback. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.listen(0, '127.0.0.1', () => {
      const port = server.address().port
      server.close(() => resolve(port))
    })
    server.on('error', reject)
  })
}

/**
 * Starts a registry on 127.0.0.1:`port` keeping its data in `dir` (so a registry stopped and
 * started again on the same folder serves what was pushed before); resolves once it answers.
 */
export async function startDockerRegistry(dir, port) {
  const config = path.join(dir, 'config.yml')
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(
    config,
    `version: 0.1\nlog: {level: error}\nstorage: {filesystem: {rootdirectory: ${dir}/data}}\nhttp: {addr: 127.0.0.1:${port}}\n`
  )
  const child = spawn('docker-registry', ['serve', config], { stdio: 'ignore' })
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/v2/`)
      .then((r) => r.ok)
      .catch(() => false)
    if (ok) return child
    await new Promise((r) => setTimeout(r, 100))
  }
  child.kill('SIGKILL')
  throw new Error(`docker-registry did not start on 127.0.0.1:${port}`)
}

/** Stops a registry started by startDockerRegistry and waits until it is gone. */
export async function stopDockerRegistry(child) {
  if (child.exitCode !== null || child.signalCode !== null) return
  const gone = new Promise((r) => child.once('exit', r))
  child.kill('SIGKILL')
  await gone
}
