import { renderComment } from '../../src/report/comment.js'
import { sampleReport } from './sample.js'

// Default-ignorable, bidi, private-use and unassigned code points must never reach the review raw:
// not in the diff's contents, not in file names. The 30 below passed through the old hand lists.
const TRIED = [
  0x034f, // combining grapheme joiner
  0x115f, // Hangul choseong filler
  0x1160, // Hangul jungseong filler
  0x17b4, // Khmer vowel inherent aq
  0x17b5, // Khmer vowel inherent aa
  0x180b, // Mongolian free variation selector one
  0x180c,
  0x180d,
  0x180f,
  0x2065, // reserved default-ignorable
  0x206a, // inhibit symmetric swapping
  0x206b,
  0x206c,
  0x206d,
  0x206e,
  0x206f,
  0x3164, // Hangul filler
  0xfe00, // variation selector 1
  0xfe01,
  0xfe0e,
  0xfe0f,
  0xffa0, // halfwidth Hangul filler
  0xfff0, // unassigned, default-ignorable
  0x1bca0, // shorthand format letter overlap
  0x1d173, // musical symbol begin beam
  0x1d17a,
  0x1d174, // musical symbol end beam
  0xe0100, // variation selector 17
  0xe01ef, // variation selector 256
  0xe0fff // unassigned tag-block code point
]
const EXTRA = [0xe000, 0xf0000, 0x0378, 0x202e, 0x2067, 0x061c]

describe('every hidden code point is made visible in the review', () => {
  test.each([...TRIED, ...EXTRA].map((c) => [c.toString(16), c]))(
    'U+%s in the diff and in a file name',
    (_hex, cp) => {
      const ch = String.fromCodePoint(cp)
      const render = (hidden: string): string => {
        const name = `src/a${hidden}b.js`
        const report = sampleReport()
        report.outcome = 'success'
        report.diff.files = [
          {
            path: name,
            status: 'modified',
            additions: 1,
            deletions: 0,
            binary: false,
            mode: '100644'
          }
        ]
        const patch = `diff --git a/${name} b/${name}\n--- a/${name}\n+++ b/${name}\n@@ -1 +1 @@\n-x\n+if (role === "admin${hidden}") grant()\n`
        return renderComment(report, patch)
      }
      const count = (md: string): number => [...md].filter((c) => c === ch).length
      const md = render(ch)
      // As many as the product's own text holds (its emoji carry U+FE0F): none came from the change.
      expect(count(md)).toBe(count(render('')))
      expect(md).toContain(`⟨U+${cp.toString(16).toUpperCase().padStart(4, '0')}⟩`)
    }
  )
})
