/** Releases: a release of a tag that exists in the repository (the tag is pushed first). */
import type { Routes } from './routes.js'

export interface Release {
  id: number
  tag_name: string
  target_commitish: string
  name: string | null
  body: string | null
  prerelease: boolean
  make_latest: string
  /** The commit the tag named when the release was made. */
  commit: string
}

export const releasesRoutes: Routes = {
  'POST /releases': (gh, { b }) => {
    const tag = String(b.tag_name)
    let commit: string
    try {
      commit = gh.git(['rev-parse', '--verify', `refs/tags/${tag}^{commit}`]).trim()
    } catch {
      // GitHub would create the tag from target_commitish; a release here must find it pushed.
      return [
        422,
        { message: 'Validation Failed', errors: [{ field: 'tag_name', code: 'invalid' }] }
      ]
    }
    if (gh.releases.some((r) => r.tag_name === tag))
      return [
        422,
        { message: 'Validation Failed', errors: [{ field: 'tag_name', code: 'already_exists' }] }
      ]
    const r: Release = {
      id: gh.nextId++,
      tag_name: tag,
      target_commitish: (b.target_commitish as string | undefined) ?? 'main',
      name: (b.name as string | undefined) ?? null,
      body: (b.body as string | undefined) ?? null,
      prerelease: b.prerelease === true,
      make_latest: (b.make_latest as string | undefined) ?? 'true',
      commit
    }
    gh.releases.push(r)
    const html = `https://github.com/${gh.owner}/${gh.repo}/releases/tag/${tag}`
    return [201, { ...r, html_url: html, url: html, draft: false }]
  }
}
