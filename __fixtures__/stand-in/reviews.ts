/** Reviews and comments: pull request reviews (GitHub's one-pending-review-per-user rule, the
 * diff-line rule of inline comments), their inline comments and replies, issue comments and
 * reactions. */
import { notFound, type Routes } from './routes.js'
import type { Comment, Review, ReviewLineComment } from './state.js'

export const reviewsRoutes: Routes = {
  'GET /pulls/{pull_number}/reviews': (gh, { user, url, pull }) => {
    if (!pull) return notFound
    const visible = gh.reviews.filter(
      (r) => r.pull === pull.number && (r.state !== 'PENDING' || r.user.login === user.login)
    )
    const perPage = Number(url.searchParams.get('per_page') ?? 30)
    const page = Number(url.searchParams.get('page') ?? 1)
    const slice = visible.slice((page - 1) * perPage, page * perPage)
    const headers: Record<string, string> = {}
    if (page * perPage < visible.length) {
      headers.link = `<${gh.url}/repos/${gh.owner}/${gh.repo}/pulls/${pull.number}/reviews?per_page=${perPage}&page=${page + 1}>; rel="next"`
    }
    return [200, slice.map((r) => gh.reviewJson(r)), headers]
  },
  'POST /pulls/{pull_number}/reviews': (gh, { b, user, pull }) => {
    if (!pull) return notFound
    const event = b.event as string | undefined
    if (
      !event &&
      gh.reviews.some(
        (r) => r.pull === pull.number && r.state === 'PENDING' && r.user.login === user.login
      )
    ) {
      return [
        422,
        {
          message: 'Unprocessable Entity',
          errors: ['User can only have one pending review per pull request']
        }
      ]
    }
    if ((event === 'COMMENT' || event === 'REQUEST_CHANGES') && !b.body) {
      return [422, { message: 'Unprocessable Entity', errors: ['Body is required'] }]
    }
    const commit = (b.commit_id as string | undefined) ?? gh.headSha(pull)
    if (!gh.commitExists(commit))
      return [
        422,
        {
          message: 'Unprocessable Entity',
          errors: ['commit_id is not part of the pull request']
        }
      ]
    const comments = (b.comments as ReviewLineComment[] | undefined) ?? []
    const files = gh.pullFiles(pull)
    for (const c of comments) {
      // GitHub's rule: a comment's lines must be lines of the pull request's diff, on that side.
      const f = files.find((x) => x.filename === c.path)
      const lines = f?.patch !== undefined ? diffLines(String(f.patch)) : undefined
      const ok =
        lines !== undefined &&
        lines[c.side ?? 'RIGHT'].has(c.line) &&
        (c.start_line === undefined || lines[c.start_side ?? c.side ?? 'RIGHT'].has(c.start_line))
      if (!ok)
        return [
          422,
          {
            message: 'Unprocessable Entity',
            errors: ['Pull request review thread line must be part of the diff']
          }
        ]
    }
    const review: Review = {
      id: gh.nextId++,
      pull: pull.number,
      user,
      comments,
      body: (b.body as string | undefined) ?? '',
      state:
        event === undefined
          ? 'PENDING'
          : event === 'APPROVE'
            ? 'APPROVED'
            : event === 'COMMENT'
              ? 'COMMENTED'
              : 'CHANGES_REQUESTED',
      commit_id: commit,
      ...(event === undefined ? {} : { submitted_at: new Date().toISOString() })
    }
    gh.reviews.push(review)
    if (event !== undefined) gh.emit('pull_request_review', 'submitted', user, pull.number)
    return [200, gh.reviewJson(review)]
  },
  'GET /pulls/{pull_number}/comments': (gh, { pull }) => {
    // The inline comments of the pull request's reviews (submitted ones), then the replies
    // in their threads, each with its review, path and line as GitHub lists them.
    if (!pull) return notFound
    const roots = gh.reviews
      .filter((r) => r.pull === pull.number && r.state !== 'PENDING')
      .flatMap((r) =>
        (r.comments ?? []).map((c, i) => ({
          id: reviewCommentId(r.id, i),
          review: r.id,
          user: r.user,
          body: c.body,
          path: c.path,
          line: c.line,
          commit: r.commit_id,
          created_at: r.submitted_at ?? new Date().toISOString(),
          inReplyTo: undefined as number | undefined
        }))
      )
    const replies = gh.reviewReplies
      .filter((x) => x.pull === pull.number)
      .map((x) => {
        const root = roots.find((r) => r.id === x.inReplyTo)
        return {
          id: x.id,
          review: x.id + 1,
          user: x.user,
          body: x.body,
          path: root?.path ?? '',
          line: root?.line ?? null,
          commit: root?.commit ?? '',
          created_at: x.created_at,
          inReplyTo: x.inReplyTo as number | undefined
        }
      })
    return [
      200,
      [...roots, ...replies].map((c) => ({
        url: '',
        pull_request_review_id: c.review,
        id: c.id,
        node_id: `PRRC_${c.id}`,
        diff_hunk: '',
        path: c.path,
        commit_id: c.commit,
        original_commit_id: c.commit,
        user: gh.userJson(c.user),
        body: c.body,
        created_at: c.created_at,
        updated_at: c.created_at,
        html_url: `https://github.com/${gh.owner}/${gh.repo}/pull/${pull.number}#discussion_r${c.id}`,
        pull_request_url: '',
        // A person with a permission on the repository is one of its collaborators.
        author_association: gh.permissions.has(c.user.login) ? 'COLLABORATOR' : 'NONE',
        _links: { self: { href: '' }, html: { href: '' }, pull_request: { href: '' } },
        line: c.line,
        original_line: c.line,
        side: 'RIGHT',
        ...(c.inReplyTo !== undefined ? { in_reply_to_id: c.inReplyTo } : {})
      }))
    ]
  },
  'POST /pulls/{pull_number}/reviews/{review_id}/events': (gh, { p, b, user, pull }) => {
    const r = gh.reviews.find((x) => x.id === Number(p.review_id) && x.pull === pull?.number)
    if (!r || r.user.login !== user.login) return notFound
    if (r.state !== 'PENDING')
      return [
        422,
        {
          message: 'Unprocessable Entity',
          errors: ['Can not submit a review that is not pending']
        }
      ]
    if (b.body !== undefined) r.body = String(b.body)
    r.submitted_at = new Date().toISOString()
    r.state =
      b.event === 'APPROVE' ? 'APPROVED' : b.event === 'COMMENT' ? 'COMMENTED' : 'CHANGES_REQUESTED'
    gh.emit('pull_request_review', 'submitted', user, r.pull)
    return [200, gh.reviewJson(r)]
  },
  'PUT /pulls/{pull_number}/reviews/{review_id}': (gh, { p, b, user, pull }) => {
    const r = gh.reviews.find((x) => x.id === Number(p.review_id) && x.pull === pull?.number)
    if (!r) return notFound
    if (r.user.login !== user.login)
      return [403, { message: 'You can only update your own reviews' }]
    r.body = String(b.body)
    return [200, gh.reviewJson(r)]
  },
  'DELETE /pulls/{pull_number}/reviews/{review_id}': (gh, { p, user, pull }) => {
    const i = gh.reviews.findIndex((x) => x.id === Number(p.review_id) && x.pull === pull?.number)
    if (i < 0 || gh.reviews[i].user.login !== user.login) return notFound
    if (gh.reviews[i].state !== 'PENDING')
      return [422, { message: 'Unprocessable Entity', errors: ['Review is not pending'] }]
    const [r] = gh.reviews.splice(i, 1)
    return [200, gh.reviewJson(r)]
  },
  'POST /issues/{issue_number}/comments': (gh, { p, b, user }) => {
    const c: Comment = {
      id: gh.nextId++,
      issue: Number(p.issue_number),
      user,
      body: String(b.body)
    }
    gh.comments.push(c)
    gh.emit('issue_comment', 'created', user, c.issue)
    return [
      201,
      {
        id: c.id,
        body: c.body,
        user: gh.userJson(user),
        html_url: `https://github.com/${gh.owner}/${gh.repo}/pull/${c.issue}#issuecomment-${c.id}`
      }
    ]
  },
  'POST /issues/comments/{comment_id}/reactions': (gh, { p, b, user }) => {
    const content = String(b.content)
    gh.reactions.push({ commentId: Number(p.comment_id), content, user: user.login })
    return [
      201,
      { id: gh.nextId++, content, user: gh.userJson(user), created_at: '', node_id: 'R' }
    ]
  }
}

/** The lines of a file's patch that can carry a review comment, per side. */
function diffLines(patch: string): Record<'LEFT' | 'RIGHT', Set<number>> {
  const left = new Set<number>()
  const right = new Set<number>()
  let o = 0
  let n = 0
  for (const line of patch.split('\n')) {
    const h = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line)
    if (h) {
      o = Number(h[1])
      n = Number(h[2])
    } else if (line.startsWith('+')) right.add(n++)
    else if (line.startsWith('-')) left.add(o++)
    else if (!line.startsWith('\\')) {
      left.add(o++)
      right.add(n++)
    }
  }
  return { LEFT: left, RIGHT: right }
}

/** The id `GET /pulls/{n}/comments` gives the `index`-th inline comment of review `reviewId`. */
export function reviewCommentId(reviewId: number, index: number): number {
  return reviewId * 1000 + index
}
