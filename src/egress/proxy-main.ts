// Entry of dist/proxy.cjs, run by node inside the proxy container. Reads its configuration (JSON,
// secrets included) from stdin until EOF, so no secret is in the container's environment,
// command line or files; writes one JSON event per line on stdout; stops on SIGTERM.
import { EgressProxy } from './proxy.js'
import type { ProxyConfig, ProxyEvent } from './proxy.js'

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of process.stdin) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

function write(event: unknown): void {
  process.stdout.write(JSON.stringify(event) + '\n')
}

async function main(): Promise<void> {
  const config = JSON.parse(await readStdin()) as ProxyConfig
  const proxy = new EgressProxy(config, (e: ProxyEvent) => write(e))
  const address = await proxy.listen()
  write({ type: 'ready', address: address.address, port: address.port })
  const stop = (): void => {
    proxy
      .close()
      .catch(() => undefined)
      .finally(() => process.stdout.write('', () => process.exit(0)))
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

main().catch((error: unknown) => {
  process.stderr.write(`airlock proxy: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
