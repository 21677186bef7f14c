// Which commit run mode works on, when the workflow does not say: on pull_request* events the
// pull request's head commit (never the merge commit GitHub checks out by default).
import { ConfigurationError } from '../errors.js'
import { git } from './git.js'

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/

/** The events whose payload carries `pull_request.head.sha`. */
export function isPullRequestEvent(eventName: string | undefined): boolean {
  return (
    eventName !== undefined && /^pull_request(_target|_review|_review_comment)?$/.test(eventName)
  )
}

/** `pull_request.head.sha` of the event payload, or undefined when there is none. */
export function eventHeadSha(
  eventName: string | undefined,
  eventPath: string | undefined,
  readFile: (p: string) => string
): string | undefined {
  if (!isPullRequestEvent(eventName) || eventPath === undefined || eventPath === '') {
    return undefined
  }
  let event: { pull_request?: { head?: { sha?: unknown } } }
  try {
    event = JSON.parse(readFile(eventPath)) as typeof event
  } catch {
    return undefined
  }
  const sha = event.pull_request?.head?.sha
  return typeof sha === 'string' && SHA.test(sha) ? sha : undefined
}

/**
 * The `ref` run mode uses: the input when given; else on a pull_request* event the head commit,
 * which must be in the checkout (a ConfigurationError naming `ref` otherwise); else undefined
 * (the default, `HEAD`).
 */
export async function runRef(options: {
  given: string | undefined
  repoPath: string
  eventName: string | undefined
  eventPath: string | undefined
  readFile: (p: string) => string
}): Promise<string | undefined> {
  if (options.given !== undefined) return options.given
  const head = eventHeadSha(options.eventName, options.eventPath, options.readFile)
  if (head === undefined) return undefined
  const found = await git(['cat-file', '-e', `${head}^{commit}`], { cwd: options.repoPath }).then(
    () => true,
    () => false
  )
  if (!found) {
    throw new ConfigurationError(
      'ref',
      `the checkout at ${options.repoPath} does not contain the pull request's head commit ${head} (GitHub checks out the merge commit by default); check out the head with actions/checkout \`ref: \${{ github.event.pull_request.head.sha }}\` and \`fetch-depth: 0\`, or give \`ref\` explicitly`
    )
  }
  return head
}
