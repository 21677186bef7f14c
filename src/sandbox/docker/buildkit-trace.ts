// BuildKit's progress as the engine streams it: `{"id":"moby.buildkit.trace","aux":"<base64>"}`,
// each aux a protobuf `moby.buildkit.v1.StatusResponse`. Only what a build log needs is read
// (step names, their errors and output lines), with a minimal reader of the protobuf wire format:
// the full schema and a protobuf runtime would be far larger than these few fields.
//
//   StatusResponse { repeated Vertex vertexes = 1; repeated VertexStatus statuses = 2;
//                    repeated VertexLog logs = 3; }
//   Vertex         { string digest = 1; ... string name = 3; bool cached = 4; ...
//                    Timestamp completed = 6; string error = 7; }
//   VertexLog      { string vertex = 1; ...; bytes msg = 4; }

type Field = { num: number; bytes?: Buffer; value?: number }

/** The top-level fields of one protobuf message; throws on malformed input. */
export function protoFields(buf: Buffer): Field[] {
  const out: Field[] = []
  let i = 0
  const varint = (): number => {
    let result = 0
    let shift = 0
    for (;;) {
      if (i >= buf.length) throw new Error('truncated varint')
      const b = buf[i++]
      result += (b & 0x7f) * 2 ** shift
      if ((b & 0x80) === 0) return result
      shift += 7
      if (shift > 63) throw new Error('varint too long')
    }
  }
  while (i < buf.length) {
    const tag = varint()
    const num = Math.floor(tag / 8)
    const wire = tag & 7
    if (wire === 0) out.push({ num, value: varint() })
    else if (wire === 2) {
      const len = varint()
      if (i + len > buf.length) throw new Error('truncated field')
      out.push({ num, bytes: buf.subarray(i, i + len) })
      i += len
    } else if (wire === 1) i += 8
    else if (wire === 5) i += 4
    else throw new Error(`unsupported wire type ${wire}`)
  }
  return out
}

/** A decoder that remembers the steps already shown; returns the log lines of one trace event. */
export function buildkitTrace(): (aux: string) => string[] {
  const shown = new Set<string>()
  return (aux) => {
    const lines: string[] = []
    try {
      read(aux, lines)
    } catch {
      // Progress is for the log only: a message this reader cannot follow is skipped.
    }
    return lines
  }

  function read(aux: string, lines: string[]): void {
    for (const f of protoFields(Buffer.from(aux, 'base64'))) {
      if (f.bytes === undefined) continue
      const inner = protoFields(f.bytes)
      const str = (n: number): string | undefined =>
        inner.find((x) => x.num === n)?.bytes?.toString('utf8')
      if (f.num === 1) {
        const digest = str(1) ?? ''
        const name = str(3) ?? ''
        const cached = inner.some((x) => x.num === 4 && x.value === 1)
        const done = inner.some((x) => x.num === 6)
        const error = str(7)
        if (error !== undefined && error !== '' && !shown.has(`${digest}!`)) {
          shown.add(`${digest}!`)
          lines.push(`ERROR ${name}: ${error}`)
        } else if (done && !shown.has(digest)) {
          shown.add(digest)
          lines.push(`${cached ? 'CACHED ' : ''}${name}`)
        }
      } else if (f.num === 3) {
        const msg = inner.find((x) => x.num === 4)?.bytes?.toString('utf8') ?? ''
        for (const l of msg.split('\n')) if (l.trim() !== '') lines.push(`  ${l.trimEnd()}`)
      }
    }
  }
}
