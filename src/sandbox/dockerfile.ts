/** Reading the `FROM` lines of a Dockerfile, to check that every base image is pinned. Pure. */
import { ConfigurationError } from '../errors.js'
import { INPUT } from '../input-names.js'

export interface BaseImage {
  /** The reference as written, after build-arg substitution. */
  ref: string
  /** `digest` (name@sha256:...), `image-id` (sha256:<64 hex>), `stage` (an earlier stage), `scratch`, or `unpinned`. */
  pin: 'digest' | 'image-id' | 'stage' | 'scratch' | 'unpinned'
  /** The sha256 digest or image id, when pinned. */
  digest?: string
  line: number
  /** The reference as the FROM line writes it, when it names build args without a value. */
  written?: string
  /** The build args the FROM line names that have no value (no build arg, no default). */
  unset?: string[]
  /** Of those, the ones given in build-args but not declared by an `ARG` before the first FROM. */
  undeclared?: string[]
}

const DIGEST = /@(sha256:[a-f0-9]{64})$/
const IMAGE_ID = /^(sha256:[a-f0-9]{64})$/

/** Joins continuation lines and drops comments; returns [lineNumber, text] instructions. */
function instructions(text: string): [number, string][] {
  const out: [number, string][] = []
  const lines = text.split(/\r?\n/)
  let current = ''
  let startLine = 0
  let escape = '\\'
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    const directive = /^#\s*escape\s*=\s*(\S)\s*$/i.exec(line)
    if (directive && out.length === 0 && current === '') {
      escape = directive[1]
      continue
    }
    if (current === '' && /^\s*#/.test(line)) continue
    if (current === '') startLine = i + 1
    const trimmed = line.replace(/\s+$/, '')
    if (trimmed.endsWith(escape)) {
      current += trimmed.slice(0, -1) + ' '
      continue
    }
    current += line
    if (current.trim() !== '') out.push([startLine, current.trim()])
    current = ''
  }
  if (current.trim() !== '') out.push([startLine, current.trim()])
  return out
}

/** `value` with the args substituted as Docker does; `unset` collects the names without a value. */
function substitute(value: string, args: Record<string, string>, unset?: Set<string>): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?([-+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (
      _m,
      braced: string | undefined,
      op: string | undefined,
      word: string | undefined,
      bare: string | undefined
    ) => {
      const name = braced ?? bare ?? ''
      const v = args[name]
      if (op === '-') return v !== undefined && v !== '' ? v : (word ?? '')
      if (op === '+') return v !== undefined && v !== '' ? (word ?? '') : ''
      if (v === undefined || v === '') unset?.add(name)
      return v ?? ''
    }
  )
}

/**
 * The base images of every stage. Global `ARG`s (before the first FROM) take their defaults,
 * overridden by the build args, as Docker does.
 */
export function baseImages(dockerfile: string, buildArgs: Record<string, string>): BaseImage[] {
  const globalArgs: Record<string, string> = {}
  const stages = new Set<string>()
  const bases: BaseImage[] = []
  let seenFrom = false
  for (const [line, instr] of instructions(dockerfile)) {
    const m = /^(\S+)\s*(.*)$/.exec(instr)
    if (!m) continue
    const keyword = m[1].toUpperCase()
    const rest = m[2]
    if (keyword === 'ARG' && !seenFrom) {
      for (const decl of rest.split(/\s+/)) {
        const eq = decl.indexOf('=')
        const name = eq >= 0 ? decl.slice(0, eq) : decl
        const dflt = eq >= 0 ? decl.slice(eq + 1).replace(/^"(.*)"$/, '$1') : undefined
        const value = buildArgs[name] ?? dflt
        if (value !== undefined) globalArgs[name] = substitute(value, globalArgs)
      }
      continue
    }
    if (keyword !== 'FROM') continue
    seenFrom = true
    const words = rest.split(/\s+/).filter((w) => !w.startsWith('--'))
    const unset = new Set<string>()
    const ref = substitute(words[0] ?? '', globalArgs, unset)
    const alias =
      words.length >= 3 && words[1].toUpperCase() === 'AS' ? words[2].toLowerCase() : undefined
    const base = classify(ref, line, stages)
    const undeclared = [...unset].filter((n) => buildArgs[n] !== undefined).sort()
    bases.push(
      unset.size > 0
        ? {
            ...base,
            written: words[0] ?? '',
            unset: [...unset].sort(),
            ...(undeclared.length > 0 ? { undeclared } : {})
          }
        : base
    )
    if (alias) stages.add(alias)
  }
  return bases
}

function classify(ref: string, line: number, stages: Set<string>): BaseImage {
  if (ref.toLowerCase() === 'scratch') return { ref, pin: 'scratch', line }
  if (stages.has(ref.toLowerCase())) return { ref, pin: 'stage', line }
  const digest = DIGEST.exec(ref)
  if (digest) return { ref, pin: 'digest', digest: digest[1], line }
  const id = IMAGE_ID.exec(ref)
  if (id) return { ref, pin: 'image-id', digest: id[1], line }
  return { ref, pin: 'unpinned', line }
}

/**
 * A base image not pinned, refused unless `allow-unpinned-base: true`: a configuration error of
 * the `dockerfile` input (exit 2), the same one at `plan` and at `run`, naming every pin form.
 */
export class UnpinnedBaseError extends ConfigurationError {
  constructor(readonly bases: BaseImage[]) {
    super(INPUT.dockerfile, unpinnedMessage(bases))
    this.name = 'UnpinnedBaseError'
  }
}

/**
 * What is wrong with each unpinned FROM, and the fix: a FROM that names build args without a value
 * first (its image name is empty or partial: the fix is a value, not a pin), then the others.
 */
function unpinnedMessage(bases: BaseImage[]): string {
  const parts: string[] = []
  const unsetBases = bases.filter((b) => (b.unset ?? []).length > 0)
  if (unsetBases.length > 0) {
    const names = [...new Set(unsetBases.flatMap((b) => b.unset ?? []))]
    const undeclared = [...new Set(unsetBases.flatMap((b) => b.undeclared ?? []))]
    const example = names.map((n) => `${n}=<image>@sha256:<digest>`).join(' ')
    const fix =
      undeclared.length > 0
        ? `it is given in build-args but not declared: add ${undeclared.map((n) => `\`ARG ${n}\``).join(', ')} before the first FROM (Docker substitutes only those)`
        : `give ${names.length > 1 ? 'them values' : 'it one'} with build-args: ${example} (CLI: --build-args ${example})`
    parts.push(
      `the build arg${names.length > 1 ? 's' : ''} ${names.join(', ')} ${names.length > 1 ? 'have' : 'has'} no value: ${unsetBases
        .map((b) => `FROM ${b.written ?? b.ref} (line ${b.line})`)
        .join(', ')} names no image; ${fix}`
    )
  }
  const rest = bases.filter((b) => (b.unset ?? []).length === 0)
  if (rest.length > 0)
    parts.push(
      `unpinned base image${rest.length > 1 ? 's' : ''}: ${rest.map((b) => `${b.ref} (line ${b.line})`).join(', ')}; pin each FROM by digest (FROM name:tag@sha256:<digest>) or by a local image ID (FROM sha256:<64 hex>, as docker image inspect -f '{{.Id}}' IMAGE prints it), or allow it with allow-unpinned-base: true (CLI: --allow-unpinned-base)`
    )
  return parts.join('; and ')
}
