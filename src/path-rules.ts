// The path rules of a run's policy as the inputs give them: the default protected set, the
// checks of allowed/protected patterns, and the default diff limits. Shared by the inputs (which
// validate them) and the evidence (which applies them).
import picomatch from 'picomatch'
import { ConfigurationError } from './errors.js'

export interface DiffLimits {
  /** Files listed in the report (the rest are counted, not listed). */
  maxChangedFiles: number
  /** Bytes of diff.patch; the patch is cut at the last whole file that fits. */
  maxDiffBytes: number
}

export const DEFAULT_DIFF_LIMITS: DiffLimits = {
  maxChangedFiles: 2000,
  maxDiffBytes: 20 * 1024 * 1024
}

const LOCKFILES = [
  // npm, yarn, pnpm, bun
  '**/package-lock.json',
  '**/npm-shrinkwrap.json',
  '**/yarn.lock',
  '**/.yarnrc.yml',
  '**/pnpm-lock.yaml',
  '**/pnpm-workspace.yaml',
  '**/bun.lock',
  '**/bun.lockb',
  // pip, pipenv, poetry, uv, pdm
  '**/requirements*.txt',
  '**/constraints*.txt',
  '**/Pipfile.lock',
  '**/poetry.lock',
  '**/uv.lock',
  '**/pdm.lock',
  // cargo, go, bundler, composer, gradle
  '**/Cargo.lock',
  '**/go.sum',
  '**/go.work.sum',
  '**/Gemfile.lock',
  '**/composer.lock',
  '**/gradle.lockfile',
  '**/*.lockfile',
  '**/gradle/verification-metadata.xml',
  '**/gradle-wrapper.properties',
  '**/gradle-wrapper.jar'
]

const LINT_FORMAT = [
  '**/.editorconfig',
  '**/.eslintrc*',
  '**/eslint.config.*',
  '**/.eslintignore',
  '**/.prettierrc*',
  '**/prettier.config.*',
  '**/.prettierignore',
  '**/.stylelintrc*',
  '**/stylelint.config.*',
  '**/biome.json',
  '**/biome.jsonc',
  '**/.markdownlint*',
  '**/tsconfig*.json',
  '**/.flake8',
  '**/.pylintrc',
  '**/pylintrc',
  '**/ruff.toml',
  '**/.ruff.toml',
  '**/mypy.ini',
  '**/.mypy.ini',
  '**/.rubocop.yml',
  '**/.golangci.yml',
  '**/.golangci.yaml',
  '**/.golangci.toml',
  '**/rustfmt.toml',
  '**/.rustfmt.toml',
  '**/clippy.toml',
  '**/.clippy.toml',
  '**/.clang-format',
  '**/.clang-tidy',
  '**/.pre-commit-config.yaml',
  '**/.husky/**'
]

const EDITOR_AND_GIT = [
  '**/.gitmodules',
  '**/.gitattributes',
  '**/.vscode/**',
  '**/*.code-workspace',
  '**/.idea/**',
  '**/.devcontainer/**',
  '**/.devcontainer.json',
  '**/.envrc'
]

/** Files that steer coding agents: instructions, tool and MCP server settings. */
const AGENT_FILES = [
  '**/AGENTS.md',
  '**/CLAUDE.md',
  '**/GEMINI.md',
  '**/.claude/**',
  '**/.cursor/**',
  '**/.cursorrules',
  '**/.mcp.json'
]

/**
 * Dependency manifests of the common ecosystems (npm's package.json and Python's pyproject.toml
 * are protected by their dependency sections below): where code comes from, and from which source
 * (git sources, `replace` directives, registries), changes only with an explicit approval.
 */
const MANIFESTS = [
  // Python
  '**/requirements*.in',
  '**/requirements/*.in',
  '**/requirements/*.txt',
  '**/setup.cfg',
  '**/setup.py',
  '**/Pipfile',
  // Go, Rust
  '**/go.mod',
  '**/go.work',
  '**/Cargo.toml',
  // Ruby, PHP
  '**/Gemfile',
  '**/*.gemspec',
  '**/composer.json',
  // Java / Kotlin
  '**/pom.xml',
  '**/build.gradle',
  '**/build.gradle.kts',
  '**/settings.gradle',
  '**/settings.gradle.kts',
  '**/*.versions.toml',
  // .NET
  '**/*.csproj',
  '**/*.fsproj',
  '**/*.vbproj',
  '**/Directory.Packages.props',
  '**/Directory.Build.props',
  '**/Directory.Build.targets',
  '**/packages.config',
  '**/[Nn]u[Gg]et.[Cc]onfig',
  // Deno
  '**/deno.json',
  '**/deno.jsonc',
  '**/import_map.json'
]

/** Package-manager settings (registries, install hooks, credentials) and build entry points. */
const PACKAGE_AND_BUILD = [
  '**/.npmrc',
  '**/.yarnrc*',
  '**/pip.conf',
  '**/.cargo/config*',
  '**/Dockerfile*',
  '**/Makefile'
]

/** The default protected set; `protected-paths` with `+` items extends it, other items replace it. */
export const DEFAULT_PROTECTED_PATHS: readonly string[] = [
  '.github/**',
  '.github/airlock/**',
  ...AGENT_FILES,
  ...PACKAGE_AND_BUILD,
  ...MANIFESTS,
  ...LOCKFILES,
  ...LINT_FORMAT,
  ...EDITOR_AND_GIT,
  '**/package.json#scripts',
  '**/package.json#dependencies',
  '**/pyproject.toml#dependencies'
]

export const SCRIPTS_SUFFIX = '#scripts'
export const DEPS_SUFFIX = '#dependencies'
const SUFFIXES = [SCRIPTS_SUFFIX, DEPS_SUFFIX]

/** The `#scripts` / `#dependencies` suffix of a protected pattern, or null. */
export function suffixOf(pattern: string): string | null {
  return SUFFIXES.find((x) => pattern.endsWith(x)) ?? null
}

/**
 * The effective protected list from the `protected-paths` input:
 * - absent: the defaults;
 * - every item starts with `+`: the defaults plus those items;
 * - `none`: nothing is protected;
 * - otherwise: exactly the given items (the defaults are replaced).
 */
export function resolveProtectedPaths(items: string[], input = 'protected-paths'): string[] {
  if (items.length === 0) return [...DEFAULT_PROTECTED_PATHS]
  if (items.length === 1 && items[0] === 'none') return []
  const extending = items.filter((i) => i.startsWith('+'))
  if (extending.length > 0 && extending.length < items.length) {
    throw new ConfigurationError(
      input,
      'mixes `+PATTERN` (extend the defaults) with plain patterns (replace them); use one form'
    )
  }
  const patterns = extending.length > 0 ? items.map((i) => i.slice(1).trim()) : items
  for (const p of patterns) checkPattern(input, p)
  return extending.length > 0 ? [...DEFAULT_PROTECTED_PATHS, ...patterns] : patterns
}

export function checkAllowedPaths(items: string[], input = 'allowed-paths'): string[] {
  for (const p of items) {
    checkPattern(input, p)
    const suffix = suffixOf(p)
    if (suffix !== null)
      throw new ConfigurationError(input, `"${p}": ${suffix} only applies to protected-paths`)
  }
  return items
}

function checkPattern(input: string, pattern: string): void {
  const suffix = suffixOf(pattern)
  const glob = suffix !== null ? pattern.slice(0, -suffix.length) : pattern
  if (glob === '') throw new ConfigurationError(input, 'has an empty pattern')
  if (glob.startsWith('!'))
    throw new ConfigurationError(
      input,
      `"${pattern}": negated patterns are not supported; list what you mean positively`
    )
  if (glob.startsWith('/') || glob.split('/').includes('..'))
    throw new ConfigurationError(input, `"${pattern}" must be relative to the repository root`)
  const unclosed = unclosedBracket(glob)
  if (unclosed !== null)
    throw new ConfigurationError(
      input,
      `"${pattern}" has an unclosed ${unclosed}; close it, or write \\${unclosed} to match the character itself`
    )
  try {
    picomatch.makeRe(glob, GLOB_OPTIONS)
  } catch (error) {
    throw new ConfigurationError(input, `"${pattern}" is not a valid glob (${String(error)})`)
  }
}

/** The first `[`, `{` or `(` a glob opens and never closes (picomatch would match it literally). */
function unclosedBracket(glob: string): string | null {
  const close: Record<string, string> = { '[': ']', '{': '}', '(': ')' }
  const open: string[] = []
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]
    if (c === '\\') {
      i++
      continue
    }
    const top = open[open.length - 1]
    if (top === '[') {
      if (c === ']' && glob[i - 1] !== '[') open.pop()
      continue
    }
    if (c in close) open.push(c)
    else if (top !== undefined && c === close[top]) open.pop()
  }
  return open[0] ?? null
}

export const GLOB_OPTIONS: picomatch.PicomatchOptions = { dot: true, nonegate: true }
