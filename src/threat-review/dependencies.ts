// Dependencies: names that imitate popular packages, and sources outside the public registry.
import { cut } from './finding.js'
import type { ThreatFinding } from './finding.js'
import { joined } from './line-reading.js'
import type { PatchFile, PatchLine } from './patch.js'
import { typosquat } from './typosquat.js'
import type { Ecosystem } from './typosquat.js'

const NPM_SPEC =
  /^(\^|~|>=?|<=?|=)?\s*v?\d|^\*$|^latest$|^next$|^npm:|^git(\+[a-z]+)?:|^github:|^gitlab:|^bitbucket:|^https?:|^file:|^link:|^workspace:|^[\w.-]+\/[\w.-]+(#.*)?$/
const NON_DEP_KEYS = new Set([
  'version',
  'node',
  'npm',
  'yarn',
  'pnpm',
  'vscode',
  'typescript-version'
])
const OFF_REGISTRY =
  /^(git(\+[a-z]+)?:|github:|gitlab:|bitbucket:|https?:|file:|link:|[\w.-]+\/[\w.-]+(#.*)?$)/

/** The dependency names a file's added lines declare, with their line and ecosystem. */
export function declaredDependencies(
  f: PatchFile
): { eco: Ecosystem; name: string; line: PatchLine; source?: string }[] {
  const out: { eco: Ecosystem; name: string; line: PatchLine; source?: string }[] = []
  const name = f.path.slice(f.path.lastIndexOf('/') + 1)
  for (const l of f.added) {
    // JSON and TOML escapes decoded: "\u0435xpress" is the name npm installs.
    const t = joined(l.text)
    if (name === 'package.json') {
      const m = /^\s*"(@?[^"\s]+)"\s*:\s*"([^"]*)"/.exec(t)
      if (!m || NON_DEP_KEYS.has(m[1]) || !NPM_SPEC.test(m[2])) continue
      const alias = /^npm:(@?[^@]+)/.exec(m[2])
      out.push({
        eco: 'npm',
        name: m[1],
        line: l,
        ...(OFF_REGISTRY.test(m[2]) ? { source: m[2] } : {})
      })
      if (alias) out.push({ eco: 'npm', name: alias[1], line: l })
    } else if (/^(requirements|constraints)[\w.-]*\.(txt|in)$|\.requirements\.txt$/.test(name)) {
      if (/^\s*(-i|--index-url|--extra-index-url|--trusted-host|-f|--find-links)\b/.test(t)) {
        out.push({ eco: 'pypi', name: '', line: l, source: t.trim() })
        continue
      }
      if (/^\s*(-e\s+)?(git\+|https?:|file:)/.test(t)) {
        out.push({ eco: 'pypi', name: '', line: l, source: t.trim() })
        continue
      }
      const m =
        /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(==|>=|<=|~=|!=|===|<|>|;|@|$)/.exec(t)
      if (m)
        out.push({
          eco: 'pypi',
          name: m[1],
          line: l,
          ...(/@\s*(git\+|https?:|file:)/.test(t) ? { source: t.trim() } : {})
        })
    } else if (
      name === 'pyproject.toml' ||
      name === 'setup.py' ||
      name === 'setup.cfg' ||
      name === 'Pipfile'
    ) {
      for (const m of t.matchAll(
        /["']([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(==|>=|<=|~=|!=|<|>|@)[^"']*["']/g
      ))
        out.push({ eco: 'pypi', name: m[1], line: l })
      const poetry =
        /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*=\s*(["']\s*[\^~>=<*\d]|\{\s*(version|git|path|url)\b)/.exec(
          t
        )
      if (
        poetry &&
        !['python', 'version', 'requires-python', 'name'].includes(poetry[1].toLowerCase())
      )
        out.push({
          eco: 'pypi',
          name: poetry[1],
          line: l,
          ...(/\b(git|path|url)\s*=/.test(t) ? { source: t.trim() } : {})
        })
    } else if (name === 'go.mod') {
      const m = /^\s*(?:require\s+)?([a-z0-9.-]+\.[a-z]{2,}(?:\/[^\s]+)?)\s+v\d/.exec(t)
      if (m && !/^\s*module\s/.test(t)) out.push({ eco: 'go', name: m[1], line: l })
      if (/^\s*replace\s|=>\s*(\.{1,2}\/|\/)/.test(t))
        out.push({ eco: 'go', name: '', line: l, source: t.trim() })
    } else if (name === 'Cargo.toml') {
      const m =
        /^\s*([A-Za-z0-9_-]+)\s*=\s*(["']\s*[\^~>=<*\d]|\{[^}]*\b(version|git|path)\s*=)/.exec(t)
      if (m && !['version', 'edition', 'rust-version', 'name', 'resolver'].includes(m[1]))
        out.push({
          eco: 'crates',
          name: m[1],
          line: l,
          ...(/\b(git|path)\s*=/.test(t) ? { source: t.trim() } : {})
        })
    } else if (/\.go$/.test(name)) {
      const m = /^\s*(?:import\s+)?(?:\w+\s+)?"([a-z0-9.-]+\.[a-z]{2,}\/[^"]+)"/.exec(t)
      if (m) out.push({ eco: 'go', name: m[1].split('/').slice(0, 3).join('/'), line: l })
    } else if (/\.[cm]?[jt]sx?$/.test(name)) {
      for (const m of t.matchAll(
        /\b(?:require\s*\(\s*|from\s+|import\s+)["']((?:@[\w.-]+\/)?[\w.-]+)[^"']*["']/g
      ))
        if (!m[1].startsWith('.') && !m[1].startsWith('node:'))
          out.push({ eco: 'npm', name: m[1], line: l })
    }
  }
  return out
}

export function dependencies(f: PatchFile, out: ThreatFinding[]): void {
  const seen = new Set<string>()
  for (const d of declaredDependencies(f)) {
    if (d.source !== undefined) {
      out.push({
        path: f.path,
        line: d.line.line,
        side: 'RIGHT',
        class: 'typosquat',
        rule: 'dependency-source',
        severity: 'medium',
        why: 'a dependency or package index outside the public registry (a git URL, a path, another index): what it installs is not what its name says',
        match: cut(d.line.text.trim())
      })
    }
    if (d.name === '' || seen.has(`${d.eco}\0${d.name}`)) continue
    seen.add(`${d.eco}\0${d.name}`)
    const s = typosquat(d.eco, d.name)
    if (s === null) continue
    out.push({
      path: f.path,
      line: d.line.line,
      side: 'RIGHT',
      class: 'typosquat',
      rule: 'typosquat',
      severity: 'high',
      why: `the dependency "${d.name}" ${s.why}`,
      match: cut(d.line.text.trim())
    })
  }
}
