// Which commit run mode works on, when the workflow does not say: on pull_request* events the
// pull request's head commit (never the merge commit GitHub checks out by default).
import { ConfigurationError } from '../errors.js'
import { git } from './git.js'

/**
 * The `ref` run mode uses: the input when given; else the event's pull request head commit
 * (`RunEvent.pullRequest.headSha`), which must be in the checkout (a ConfigurationError naming
 * `ref` otherwise); else undefined (the default, `HEAD`).
 */
export async function runRef(options: {
  given: string | undefined
  repoPath: string
  /** The pull request's head commit from the event, on pull_request* events. */
  headSha: string | undefined
}): Promise<string | undefined> {
  if (options.given !== undefined) return options.given
  const head = options.headSha
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
