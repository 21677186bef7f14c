// Preloaded into the stub model (`node --import`): prints `STAMP <epoch ms> <method> <path>` on
// stdout the moment a request arrives (before its body), so the fresh-runner benchmark reads
// when the first POST /v1/messages reached the stub. The stub itself is unchanged.
import http from 'node:http'
import https from 'node:https'

for (const Server of [http.Server, https.Server]) {
  const emit = Server.prototype.emit
  Server.prototype.emit = function (event, req, ...rest) {
    if (event === 'request') process.stdout.write(`STAMP ${Date.now()} ${req.method} ${req.url}\n`)
    return emit.call(this, event, req, ...rest)
  }
}
