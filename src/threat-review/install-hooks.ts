// Install-time hooks: what runs on install or build, by the manifest it is in.
import { cut } from './finding.js'
import type { ThreatFinding, ThreatSeverity } from './finding.js'
import type { PatchFile, PatchLine } from './patch.js'

const NPM_HOOK =
  /^\s*"(preinstall|install|postinstall|preuninstall|postuninstall|prepare|prepublish|prepack|postpack|dependencies)"\s*:\s*"([^"]*)"/
const HOOK_DANGER =
  /\b(curl|wget|node\s+-e|node\s+--eval|python\d?\s+-c|eval|base64|bash\s+-c|sh\s+-c|https?:|\|\s*(ba)?sh)\b/

export function installHooks(f: PatchFile, out: ThreatFinding[]): void {
  const name = f.path.slice(f.path.lastIndexOf('/') + 1)
  const add = (l: PatchLine | null, rule: string, severity: ThreatSeverity, why: string): void => {
    out.push({
      path: f.path,
      line: l?.line ?? null,
      side: 'RIGHT',
      class: 'install-hook',
      rule,
      severity,
      why,
      ...(l ? { match: cut(l.text.trim()) } : {})
    })
  }
  /** A finding on the whole file, at its first added line. */
  const onFile = (rule: string, severity: ThreatSeverity, why: string): void =>
    add(f.added[0] ?? null, rule, severity, why)
  if (name === 'package.json' || name === 'composer.json') {
    for (const l of f.added) {
      const m = NPM_HOOK.exec(l.text)
      const composer = /^\s*"(pre|post)-(install|update|autoload-dump)-cmd"\s*:/.exec(l.text)
      if (m && m[1] !== 'dependencies') {
        const danger = HOOK_DANGER.test(m[2])
        add(
          l,
          'npm-lifecycle',
          danger ? 'high' : 'medium',
          `an npm "${m[1]}" script: it runs on every install${danger ? ', and it fetches or evaluates code' : ''}`
        )
      } else if (composer)
        add(l, 'composer-script', 'medium', 'a Composer script that runs on install')
    }
    return
  }
  if (name === 'setup.py') {
    const hook = f.added.find((l) =>
      /\bcmdclass\b|class\s+\w+\s*\(\s*(install|develop|egg_info|build_py|build_ext|sdist)\s*\)/.test(
        l.text
      )
    )
    if (hook)
      add(
        hook,
        'setup-py-command',
        'high',
        'setup.py replaces an install command: it runs code on pip install'
      )
    else if (f.status === 'added' && f.added.length > 0)
      add(f.added[0], 'setup-py', 'medium', 'a new setup.py: its code runs on pip install')
    return
  }
  if (name === 'pyproject.toml' || name === 'setup.cfg') {
    for (const l of f.added)
      if (
        /^\s*\[tool\.(setuptools\.cmdclass|hatch\.build\.hooks|hatch\.build\.targets\.\w+\.hooks)|^\s*build-backend\s*=|^\s*backend-path\s*=|^\s*cmdclass\s*=/.test(
          l.text
        )
      )
        add(
          l,
          'python-build-hook',
          'medium',
          'changes what runs when the package is built or installed'
        )
    return
  }
  if (/\.pth$/.test(name) || /^(sitecustomize|usercustomize)\.py$/.test(name)) {
    onFile('python-startup', 'high', 'Python runs this file at every interpreter start')
    return
  }
  if (name === 'build.rs') {
    if (f.status !== 'deleted')
      onFile('build-script', 'medium', 'a Cargo build script: it runs on every build')
    return
  }
  if (name === 'Cargo.toml') {
    for (const l of f.added)
      if (/^\s*build\s*=\s*["']/.test(l.text))
        add(l, 'build-script', 'medium', 'names a Cargo build script')
    return
  }
  if (/\.gradle(\.kts)?$/.test(name)) {
    for (const l of f.added)
      if (
        /\bapply\s+plugin\b|^\s*id\s*\(?\s*["']|\bcommandLine\b|\bexec\s*\{|Runtime\.getRuntime\(\)\.exec|\bProcessBuilder\b|\bclasspath\s*\(?\s*["']/.test(
          l.text
        )
      )
        add(
          l,
          'gradle-plugin',
          /commandLine|exec\s*\{|Runtime|ProcessBuilder/.test(l.text) ? 'high' : 'medium',
          'a Gradle plugin or command: it runs when the project builds'
        )
    return
  }
  if (name === 'pom.xml') {
    for (const l of f.added)
      if (/<plugin>|exec-maven-plugin|maven-antrun-plugin|<executions>|<extension>/.test(l.text))
        add(
          l,
          'maven-plugin',
          /exec-maven|antrun/.test(l.text) ? 'high' : 'medium',
          'a Maven plugin: it runs when the project builds'
        )
    return
  }
  if (name === 'binding.gyp' || name === 'extconf.rb') {
    if (f.status !== 'deleted')
      onFile('native-build', 'medium', 'a native build file: it runs on install')
    return
  }
  if (name === '.npmrc' || name === '.yarnrc' || name === '.yarnrc.yml') {
    for (const l of f.added)
      if (
        /script-shell|ignore-scripts\s*=\s*false|registry\s*[=:]|node-options|onlyBuiltDependencies|enableScripts/.test(
          l.text
        )
      )
        add(
          l,
          'package-manager-config',
          'medium',
          'changes how the package manager installs (registry, scripts)'
        )
    return
  }
  if (/\.go$/.test(name)) {
    for (const l of f.added)
      if (/^\s*\/\/go:generate\s/.test(l.text)) {
        const danger = HOOK_DANGER.test(l.text)
        add(
          l,
          'go-generate',
          danger ? 'high' : 'medium',
          `a go:generate command: it runs on \`go generate\`${danger ? ', and it fetches or evaluates code' : ''}`
        )
      }
  }
}
