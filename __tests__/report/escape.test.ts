import { neutralizeLine } from '../../src/github/client/logger.js'
import { codeBlock, escapeMarkdown, escapeProductText } from '../../src/report/escape.js'
import { stripHidden } from '../../src/text-filter.js'

describe('neutralizeLine', () => {
  it.each([
    '::add-mask::secret',
    '::set-output name=x::y',
    '  ::error::boom',
    '::stop-commands::token',
    '\u001b[31m::warning::colored'
  ])('no workflow command survives: %s', (line) => {
    const out = neutralizeLine('agent', line)
    expect(out.startsWith('agent | ')).toBe(true)
    expect(out.trimStart().startsWith('::')).toBe(false)
  })

  it('breaks the legacy ##[command] form anywhere in the line', () => {
    expect(neutralizeLine('agent', 'x ##[set-output name=a;]b')).not.toContain('##[')
  })
})

describe('escaping', () => {
  it('strips ANSI, OSC, bidi and zero-width characters', () => {
    expect(stripHidden('a\u001b[31mb\u001b]8;;http://x\u0007c\u202ed\u200be\u0000')).toBe('abcde')
  })

  it('escapes HTML, markdown and mentions', () => {
    const out = escapeMarkdown('<img src=x> @octocat [link](http://x) `code`')
    expect(out).not.toMatch(/<img/)
    expect(out).not.toMatch(/@octocat/)
    expect(out).toContain('&lt;img')
    expect(out).toContain('\\[link\\]')
  })

  it('makes a code fence longer than any backtick run inside', () => {
    const block = codeBlock('```\n</details>\n````')
    expect(block.startsWith('`````')).toBe(true)
    expect(block.split('\n').at(-1)).toBe('`````')
  })
})

describe('escapeProductText: a reason in a reply', () => {
  test('a command to copy stays a code span; the text around it is escaped', () => {
    expect(
      escapeProductText(
        'this change touches protected paths; approve it with `/airlock approve 1a2b3c4d5e6f protected` to acknowledge them'
      )
    ).toBe(
      'this change touches protected paths; approve it with `/airlock approve 1a2b3c4d5e6f protected` to acknowledge them'
    )
    expect(escapeProductText('say what to do: `/airlock run <task>`')).toBe(
      'say what to do: `/airlock run <task>`'
    )
  })
  test('outside code spans, mentions, HTML and links are inert; a span cannot be broken out of', () => {
    const out = escapeProductText('@alice opened <b>this</b> see https://x.test `a\u202eb` and `')
    expect(out).not.toMatch(/@alice|<b>|https:\/\//)
    expect(out).toContain('@\u2060alice')
    expect(out).not.toContain('\u202e')
    // The lone backtick at the end is escaped text, not the start of a span.
    expect(out.endsWith('and \\`')).toBe(true)
  })
})
