// A delaying HTTP proxy for the caches' benchmark: it stands between the installs and the local
// registry so that the registry behaves like one across a network: every request waits
// `latencyMs` before it is forwarded (a round trip to a far server), and every response body
// is paced by one shared bandwidth limit (`bytesPerSecond`, all connections together, as one
// runner's link). It forwards only to the one target it is given (the benchmark's own registry,
// on the benchmark's internal network); no dependencies, so it runs in any Node container.
//
//   node delay-proxy.mjs PORT TARGET_URL LATENCY_MS BYTES_PER_SECOND
import * as http from 'node:http'

const [port, target, latency, rate] = process.argv.slice(2)
const upstream = new URL(target)
const latencyMs = Number(latency)
const bytesPerSecond = Number(rate)
if (!(Number(port) > 0) || !(latencyMs >= 0) || !(bytesPerSecond > 0)) {
  process.stderr.write('usage: delay-proxy.mjs PORT TARGET_URL LATENCY_MS BYTES_PER_SECOND\n')
  process.exit(2)
}

/** When the shared link is free again (ms, monotonic): each chunk books its share of it. */
let linkFreeAt = 0
function sendAt(bytes) {
  const now = performance.now()
  linkFreeAt = Math.max(linkFreeAt, now) + (bytes / bytesPerSecond) * 1000
  return linkFreeAt - now
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

http
  .createServer((req, res) => {
    setTimeout(() => {
      const up = http.request(
        {
          protocol: upstream.protocol,
          hostname: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          // The client's Host stays: the registry writes tarball addresses for the proxy.
          headers: req.headers,
          agent
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.on('data', (chunk) => {
            const wait = sendAt(chunk.length)
            if (wait < 1) return void res.write(chunk)
            answer.pause()
            setTimeout(() => {
              res.write(chunk)
              answer.resume()
            }, wait)
          })
          answer.on('end', () => {
            // After the last chunk's share of the link.
            setTimeout(() => res.end(), Math.max(0, linkFreeAt - performance.now()))
          })
          answer.on('error', () => res.destroy())
        }
      )
      up.on('error', () => {
        if (!res.headersSent) res.writeHead(502)
        res.end()
      })
      req.pipe(up)
    }, latencyMs)
  })
  .listen(Number(port), '0.0.0.0')
