import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import globals from 'globals'

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'bench/dist/**',
      'node_modules/**',
      'test-tools/*/node_modules/**',
      'airlock-out/**',
      'coverage/**',
      'fixtures/reports/**',
      // Another project's code (CommonJS, mocha's globals), run only inside the sandbox.
      'fixtures/mocha-project/repo/**'
    ]
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off'
    }
  },
  {
    // Type-aware rules for the shipped code.
    files: ['src/**/*.ts'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname }
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      // String(x) of parsed, untrusted JSON/XML scalars is deliberate: an object there renders as
      // "[object Object]" in the evidence rather than failing the run.
      '@typescript-eslint/no-base-to-string': 'off'
    }
  },
  {
    files: ['**/*.test.ts'],
    languageOptions: { globals: { ...globals.jest } }
  }
)
