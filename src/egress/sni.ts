// Reads the server name (SNI) from the first bytes a client sends in a CONNECT tunnel: the TLS
// ClientHello, possibly spread over several handshake records. Pure; the input is hostile (every
// length is bounds-checked, and the total is capped).

/** The most the proxy reads before deciding (a ClientHello with post-quantum key shares is ~2 KB). */
export const MAX_HELLO_BYTES = 32 * 1024

export type HelloResult =
  | { status: 'need-more' }
  | { status: 'not-tls'; detail: string }
  | { status: 'ok'; serverName: string | null; encrypted: boolean }

const EXT_SERVER_NAME = 0x0000
/** encrypted_client_hello: the real name is hidden inside, so the outer name proves nothing. */
const EXT_ECH = 0xfe0d

/** Parses `data` (everything the client sent so far). */
export function parseClientHello(data: Buffer): HelloResult {
  // Reassemble the handshake message from consecutive handshake records (content type 22).
  const handshake: Buffer[] = []
  let have = 0
  let offset = 0
  let needed: number | undefined
  while (needed === undefined || have < needed) {
    if (data.length < offset + 5) return more(data)
    if (data[offset] !== 22) return { status: 'not-tls', detail: 'not a TLS handshake' }
    if (data[offset + 1] !== 3) return { status: 'not-tls', detail: 'not a TLS record version' }
    const len = data.readUInt16BE(offset + 3)
    if (len === 0 || len > 16384 + 256) return { status: 'not-tls', detail: 'bad record length' }
    if (data.length < offset + 5 + len) return more(data)
    handshake.push(data.subarray(offset + 5, offset + 5 + len))
    have += len
    offset += 5 + len
    if (needed === undefined) {
      const first = Buffer.concat(handshake)
      if (first.length < 4) continue
      if (first[0] !== 1) return { status: 'not-tls', detail: 'not a ClientHello' }
      needed = 4 + first.readUIntBE(1, 3)
      if (needed > MAX_HELLO_BYTES) return { status: 'not-tls', detail: 'ClientHello too large' }
    }
  }
  return readHello(Buffer.concat(handshake).subarray(4, needed))
}

function more(data: Buffer): HelloResult {
  return data.length >= MAX_HELLO_BYTES
    ? { status: 'not-tls', detail: 'no ClientHello within the first bytes' }
    : { status: 'need-more' }
}

function readHello(b: Buffer): HelloResult {
  const bad: HelloResult = { status: 'not-tls', detail: 'malformed ClientHello' }
  let p = 2 + 32 // client_version, random
  if (p + 1 > b.length) return bad
  p += 1 + b[p] // session_id
  if (p + 2 > b.length) return bad
  p += 2 + b.readUInt16BE(p) // cipher_suites
  if (p + 1 > b.length) return bad
  p += 1 + b[p] // compression_methods
  if (p === b.length) return { status: 'ok', serverName: null, encrypted: false }
  if (p + 2 > b.length) return bad
  const end = p + 2 + b.readUInt16BE(p)
  if (end > b.length) return bad
  p += 2
  let serverName: string | null = null
  let encrypted = false
  let names = 0
  while (p < end) {
    if (p + 4 > end) return bad
    const type = b.readUInt16BE(p)
    const len = b.readUInt16BE(p + 2)
    const body = p + 4
    if (body + len > end) return bad
    if (type === EXT_ECH) encrypted = true
    if (type === EXT_SERVER_NAME) {
      names++
      if (len < 2) return bad
      const listEnd = body + 2 + b.readUInt16BE(body)
      if (listEnd > body + len) return bad
      let q = body + 2
      while (q < listEnd) {
        if (q + 3 > listEnd) return bad
        const nameType = b[q]
        const nameLen = b.readUInt16BE(q + 1)
        if (q + 3 + nameLen > listEnd) return bad
        if (nameType === 0) {
          // A second host_name in one list is forbidden by RFC 6066: never pick one of two.
          if (serverName !== null) return { status: 'not-tls', detail: 'two server names' }
          serverName = b.subarray(q + 3, q + 3 + nameLen).toString('latin1')
        }
        q += 3 + nameLen
      }
    }
    p = body + len
  }
  if (names > 1) return { status: 'not-tls', detail: 'two server_name extensions' }
  return { status: 'ok', serverName, encrypted }
}
