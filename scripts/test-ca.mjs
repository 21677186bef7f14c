// A throwaway certificate authority and one server certificate signed by it (openssl), for the
// local stub upstreams of the tests, the egress benchmark and the egress demo. Never for a real
// server: the key is written next to the certificates, readable by the stub's container.
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'

/**
 * Writes ca.crt, ca.key, server.key and server.crt into `dir`: the server certificate is for
 * `names` (the first also as its CN). The files are readable by all (0644), the folder 0755, so a
 * stub server running under another uid in a container can read them.
 */
export function makeTestCerts(dir, options) {
  fs.mkdirSync(dir, { recursive: true })
  const openssl = (args, subject) =>
    execFileSync('openssl', [...args.split(' '), ...(subject ? ['-subj', subject] : [])], {
      cwd: dir,
      stdio: 'pipe'
    })
  const days = `-days ${options.days ?? 2}`
  openssl(
    `req -x509 -newkey rsa:2048 -nodes ${days} -keyout ca.key -out ca.crt`,
    `/CN=${options.caName}`
  )
  openssl(
    'req -newkey rsa:2048 -nodes -keyout server.key -out server.csr',
    `/CN=${options.names[0]}`
  )
  const altNames = options.names.map((n) => `DNS:${n}`).join(',')
  fs.writeFileSync(path.join(dir, 'ext.cnf'), `subjectAltName=${altNames}\n`)
  openssl(
    `x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial ${days} -extfile ext.cnf -out server.crt`
  )
  for (const f of ['ca.crt', 'server.crt', 'server.key']) fs.chmodSync(path.join(dir, f), 0o644)
  fs.chmodSync(dir, 0o755)
}
