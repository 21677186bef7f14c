// Needs Debian's `chromium` and `fonts-noto-color-emoji` (the review's status marks).
// Renders the review a pull request gets (comment.md of a run) the way GitHub shows it — GitHub's
// Markdown styles (github-markdown-css) in a page laid out like a pull request review — and takes
// a screenshot of it with headless Chromium (Debian's `chromium` package).
//
//   node scripts/render-review.mjs [RUN_FOLDER] [PNG]
//   defaults: airlock-out (the folder `npm run demo` writes), docs/images/review.png
//
// Run it after `npm run demo` whenever the review's format changes, and commit the PNG.
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { createRequire } from 'node:module'
import { marked } from 'marked'

const require = createRequire(import.meta.url)
const runFolder = path.resolve(process.argv[2] ?? 'airlock-out')
const png = path.resolve(process.argv[3] ?? 'docs/images/review.png')
const commentFile = path.join(runFolder, 'comment.md')
if (!fs.existsSync(commentFile)) {
  console.error(`render-review: ${commentFile} does not exist; run \`npm run demo\` first`)
  process.exit(2)
}
const chromium = ['chromium', 'chromium-browser'].find((c) => {
  try {
    execFileSync('sh', ['-c', `command -v ${c}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})
if (chromium === undefined) {
  console.error('render-review: no chromium; install it with `apt-get install chromium`')
  process.exit(2)
}

const css = fs.readFileSync(
  require.resolve('github-markdown-css/github-markdown-light.css'),
  'utf8'
)
// GitHub hides HTML comments (the report's marker) and renders the rest as GitHub Flavored Markdown.
const body = marked.parse(fs.readFileSync(commentFile, 'utf8'), { gfm: true })
const html = `<!doctype html>
<html><head><meta charset="utf-8"><style>
${css}
body { background: #fff; margin: 0; font-family: -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }
.review { width: 880px; margin: 16px; border: 1px solid #d1d9e0; border-radius: 6px; }
.head { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 8px 16px; font-size: 14px; color: #59636e; border-radius: 6px 6px 0 0; }
.head b { color: #1f2328; }
.markdown-body { padding: 16px; font-size: 14px; }
</style></head><body>
<div class="review">
  <div class="head"><b>github-actions</b> <span>bot</span> reviewed · commented</div>
  <div class="markdown-body">${body}</div>
</div>
<script>
  // The picture shows the diff the reviewer approves (GitHub shows it one click away).
  for (const d of document.querySelectorAll('details'))
    if (/^Diff/.test(d.querySelector('summary')?.textContent ?? '')) d.open = true
</script>
</body></html>
`
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-review-'))
try {
  const page = path.join(tmp, 'review.html')
  fs.writeFileSync(page, html)
  fs.mkdirSync(path.dirname(png), { recursive: true })
  execFileSync(
    chromium,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--hide-scrollbars',
      `--user-data-dir=${path.join(tmp, 'profile')}`,
      '--window-size=912,1000',
      `--screenshot=${png}`,
      `file://${page}`
    ],
    { stdio: 'ignore', timeout: 120_000 }
  )
  console.log(
    `render-review: ${path.relative(process.cwd(), png)} from ${path.relative(process.cwd(), commentFile)}`
  )
} finally {
  fs.rmSync(tmp, { recursive: true, force: true })
}
