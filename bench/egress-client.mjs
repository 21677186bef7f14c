// Runs inside a container of the egress benchmark: N sequential requests in one mode, each on a
// new connection (as an agent's HTTP client without keep-alive would), and prints the latencies.
//   node egress-client.mjs MODE N TARGET   MODE: http | https | credential
//   via the proxy when HTTPS_PROXY is set, otherwise straight to TARGET (an address).
import fs from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import tls from 'node:tls'

const [mode, n, target] = process.argv.slice(2)
const ca = fs.readFileSync('/bench/ca.crt')
const proxy = process.env.HTTPS_PROXY ? new URL(process.env.HTTPS_PROXY) : null

function body(res) {
  return new Promise((resolve, reject) => {
    const chunks = []
    res.on('data', (c) => chunks.push(c))
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    res.on('error', reject)
  })
}

function once() {
  return new Promise((resolve, reject) => {
    let req
    if (mode === 'http') {
      req = proxy
        ? http.request({
            host: proxy.hostname,
            port: proxy.port,
            path: 'http://api.test:8080/hello',
            agent: false
          })
        : http.request({
            host: target,
            port: 8080,
            path: '/hello',
            headers: { host: 'api.test:8080' },
            agent: false
          })
    } else if (mode === 'https') {
      // The same raw HTTP/1.0 exchange over TLS both ways; only the path to the upstream differs.
      const exchange = (socket) => {
        const s = tls.connect({
          ...(socket ? { socket } : { host: target, port: 8443 }),
          servername: 'api.test',
          ca
        })
        s.on('error', reject)
        s.on('secureConnect', () => s.write('GET /hello HTTP/1.0\r\nHost: api.test:8443\r\n\r\n'))
        body(s).then(resolve, reject)
      }
      if (!proxy) return exchange(undefined)
      const c = http.request({
        host: proxy.hostname,
        port: proxy.port,
        method: 'CONNECT',
        path: 'api.test:8443',
        agent: false
      })
      c.on('connect', (res, socket) => {
        if (res.statusCode !== 200) return reject(new Error(`CONNECT ${res.statusCode}`))
        exchange(socket)
      })
      c.on('error', reject)
      c.end()
      return
    } else {
      const payload = JSON.stringify({
        model: 'gpt-stub-1',
        messages: [{ role: 'user', content: 'hi' }]
      })
      const headers = {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(payload)
      }
      req = proxy
        ? http.request({
            host: proxy.hostname,
            port: proxy.port,
            method: 'POST',
            path: '/BENCH/v1/chat/completions',
            headers: { ...headers, authorization: 'Bearer placeholder' },
            agent: false
          })
        : https.request({
            host: target,
            port: 8443,
            servername: 'api.test',
            ca,
            method: 'POST',
            path: '/v1/chat/completions',
            headers: { ...headers, authorization: 'Bearer bench-key' },
            agent: false
          })
      req.on('response', (res) => body(res).then(resolve, reject))
      req.on('error', reject)
      req.end(payload)
      return
    }
    req.on('response', (res) => body(res).then(resolve, reject))
    req.on('error', reject)
    req.end()
  })
}

const times = []
for (let i = 0; i < 10; i++) await once() // warm-up, not counted
for (let i = 0; i < Number(n); i++) {
  const t0 = process.hrtime.bigint()
  const text = await once()
  times.push(Number(process.hrtime.bigint() - t0) / 1e6)
  if (i === 0 && !/OK|chat\.completion/.test(text))
    throw new Error(`unexpected reply: ${text.slice(0, 200)}`)
}
process.stdout.write(JSON.stringify({ mode, via: proxy ? 'proxy' : 'direct', times }) + '\n')
