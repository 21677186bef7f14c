// The rules the secret scan runs: secretlint's recommended preset (its comment-based switches left
// out: the agent must not be able to silence the scanner, AWS key IDs scanned alone too) and a
// JWT rule of our own.
import { rules as recommended } from '@secretlint/secretlint-rule-preset-recommend'
import type { SecretLintCoreConfig, SecretLintRuleCreator } from '@secretlint/types'

const FILTER_COMMENTS = '@secretlint/secretlint-rule-filter-comments'
const AWS = '@secretlint/secretlint-rule-aws'

const JWT = /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/g
const jwtMessages = { JWT: { en: () => 'found a JSON Web Token' } }
/** A JWT: a base64url JSON header with `alg`, a payload, and a signature. */
export const jwtRule: SecretLintRuleCreator = {
  messages: jwtMessages,
  meta: {
    id: 'airlock/jwt',
    recommended: true,
    type: 'scanner',
    supportedContentTypes: ['text'],
    docs: { url: 'https://datatracker.ietf.org/doc/html/rfc7519' }
  },
  create(context) {
    const t = context.createTranslator(jwtMessages)
    return {
      file(source) {
        for (const m of source.content.matchAll(JWT)) {
          let header: unknown
          try {
            header = JSON.parse(Buffer.from(m[0].split('.')[0], 'base64url').toString('utf8'))
          } catch {
            continue
          }
          if (typeof header !== 'object' || header === null || !('alg' in header)) continue
          context.report({ message: t('JWT'), range: [m.index, m.index + m[0].length] })
        }
      }
    }
  }
}

/** secretlint's recommended preset without its comment switches, plus the JWT rule. */
export const CONFIG: SecretLintCoreConfig = {
  rules: [
    ...recommended
      .filter((r) => r.meta.id !== FILTER_COMMENTS)
      .map((r) => ({
        id: r.meta.id,
        rule: r as SecretLintRuleCreator,
        // Access key IDs (AKIA…, ASIA…) alone, not only next to a secret key.
        ...(r.meta.id === AWS ? { options: { enableIDScanRule: true } } : {})
      })),
    { id: jwtRule.meta.id, rule: jwtRule }
  ]
}

/** The rules that run (for the docs and the tests). */
export function ruleIds(): string[] {
  return CONFIG.rules.map((r) => r.id)
}
