// The `services` input: containers the test phases get on the run's internal network (a database,
// a cache), given as a YAML mapping and checked at the edge.
import YAML from 'yaml'
import { ConfigurationError, errorMessage } from '../errors.js'
import { INPUT } from '../input-names.js'
import type { InputReader } from '../input-read.js'
import { isPlainObject } from '../plain-object.js'

export const SERVICES_INPUT = INPUT.services

export interface ServiceSpec {
  /** The name the tests reach it by (a DNS name on the run's services network). */
  name: string
  /** Digest-pinned reference (name@sha256:…) or a local image ID (sha256:…). */
  image: string
  env: Record<string, string>
  /** argv of the service (the image's entrypoint is not used). */
  command: string[]
  /** Shell command run in a fresh container of the image on the services network until it exits 0. */
  health: string
  /** Seconds to wait for `health` to pass. */
  healthTimeoutSeconds: number
  /** uid:gid it runs as; never root (0). */
  user: string
}

export const MAX_SERVICES = 5
const NAME = /^[a-z][a-z0-9-]{0,30}$/
const RESERVED = ['airlock-proxy', 'localhost']
const PINNED_OR_ID = /^([a-z0-9][a-z0-9._\-/:]*@sha256:[a-f0-9]{64}|sha256:[a-f0-9]{64})$/
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
const KEYS = ['image', 'env', 'command', 'health', 'health-timeout-seconds', 'user']

/**
 * Parses `services`:
 * ```yaml
 * db:
 *   image: registry.example/postgres@sha256:<digest>   # or a local image ID sha256:<id>
 *   env: { POSTGRES_PASSWORD: test }
 *   command: postgres -D /tmp/data                    # optional: string (shell) or list
 *   health: pg_isready -h 127.0.0.1                    # required
 *   health-timeout-seconds: 60                        # optional
 *   user: "999:999"                                   # optional, never 0
 * ```
 */
export function parseServices(raw: string | undefined): ServiceSpec[] {
  if (raw === undefined || raw.trim() === '') return []
  const fail = (message: string): never => {
    throw new ConfigurationError(SERVICES_INPUT, message)
  }
  let doc: unknown
  try {
    doc = YAML.parse(raw, { uniqueKeys: true, maxAliasCount: 10 })
  } catch (error) {
    return fail(`is not valid YAML: ${errorMessage(error)}`)
  }
  if (!isPlainObject(doc))
    return fail('must be a mapping of service name → {image, health, env, command}')
  const entries = Object.entries(doc)
  if (entries.length > MAX_SERVICES) fail(`at most ${MAX_SERVICES} services`)
  return entries.map(([name, value]): ServiceSpec => {
    if (!NAME.test(name) || RESERVED.includes(name))
      fail(
        `"${name}" is not a service name: lower-case letters, digits and -, starting with a letter`
      )
    if (!isPlainObject(value))
      return fail(`${name}: must be a mapping with at least image and health`)
    for (const k of Object.keys(value))
      if (!KEYS.includes(k)) fail(`${name}: unknown key "${k}" (valid: ${KEYS.join(', ')})`)
    const image = value.image
    if (typeof image !== 'string' || !PINNED_OR_ID.test(image))
      fail(
        `${name}: image must be pinned, as name@sha256:<64 hex digits> or a local image ID sha256:<id> (got ${JSON.stringify(image)})`
      )
    const health = value.health
    if (typeof health !== 'string' || health.trim() === '')
      fail(`${name}: health is required: a shell command that exits 0 once the service is ready`)
    const env: Record<string, string> = {}
    if (value.env !== undefined) {
      if (!isPlainObject(value.env)) fail(`${name}: env must be a mapping NAME: value`)
      for (const [k, v] of Object.entries(value.env as Record<string, unknown>)) {
        if (!ENV_NAME.test(k)) fail(`${name}: "${k}" is not a variable name`)
        if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
          fail(`${name}: env ${k} must be a string or a number`)
        env[k] = String(v)
      }
    }
    let command: string[] | undefined
    if (typeof value.command === 'string') command = ['/bin/sh', '-c', value.command]
    else if (Array.isArray(value.command) && value.command.every((c) => typeof c === 'string'))
      command = value.command
    else
      fail(
        `${name}: command is required: a string (run by /bin/sh) or a list of strings (the image's entrypoint is not used)`
      )
    const timeout = value['health-timeout-seconds'] ?? 60
    if (typeof timeout !== 'number' || !(timeout > 0) || timeout > 600)
      fail(`${name}: health-timeout-seconds must be a number of seconds between 1 and 600`)
    const user = value.user === undefined ? '' : String(value.user)
    if (!/^\d+(:\d+)?$/.test(user) || user.split(':').some((x) => Number(x) === 0))
      fail(`${name}: user is required: a numeric uid[:gid] other than 0`)
    return {
      name,
      image: image as string,
      env,
      command: command as string[],
      health: health as string,
      healthTimeoutSeconds: timeout as number,
      user: user.includes(':') ? user : `${user}:${user}`
    }
  })
}

/**
 * `services`, checked against the test command the services are for. Whether the runtime can put
 * them on a network (gVisor needs the daemon's runsc-net entry) is checked against the daemon at
 * run time (docs/isolation.md).
 */
export function servicesFor(read: InputReader): ServiceSpec[] {
  const services = parseServices(read(INPUT.services))
  if (services.length > 0 && read(INPUT.testCommand) === undefined)
    throw new ConfigurationError(
      INPUT.services,
      'needs `test-command`: services are started for the test phases'
    )
  return services
}
