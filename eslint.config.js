// ESLint (`npm run lint`): ESLint's recommended rules, typescript-eslint's
// recommended type-checked ones for the TypeScript (src/, test/ and bench/ through
// tsconfig.json, so promises and `any` are seen through the real types), and a few
// more that catch real bugs. Layout is Prettier's (`npm run format`), not ESLint's.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['lib/', 'dist/', 'coverage/', 'test-results/', '.modmirror-cache/', 'modules/', 'data/', 'test/fixtures/']),
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: globals.node,
      parserOptions: {
        // The vitest configs are outside tsconfig.json's include: each is checked on its own.
        projectService: { allowDefaultProject: ['*.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      eqeqeq: ['error', 'always'],
      'no-unused-vars': 'off', // typescript-eslint's below, which knows types, replaces it (and reads the JavaScript too)
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // The code already imports types as `import { x, type T }`; keep it so (vi.mock's `typeof import('…')` idiom stays allowed).
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      // An `async` function without `await` is deliberate here: it implements a Promise-returning interface and turns a throw into a rejection.
      '@typescript-eslint/require-await': 'off',
      // A value caught elsewhere is passed on to reject() as it was thrown, as throw may (only-throw-error allows unknown too).
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // src/extract/hcl.ts compares charCodeAt() numbers with its `const enum Ch` of character codes by design.
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
      // Refusing control characters (in names, paths, host configs) takes them in a regular expression.
      'no-control-regex': 'off',
    },
  },
  {
    // Tests read response bodies and documents as `any` (res.json()) and let expect() check their shape.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  // The JavaScript (bench, scripts, bin, configs, the browse page) is not in tsconfig.json: it has no types to check.
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // The browse page's classic scripts: they share their top-level names with each other (see index.html).
    files: ['src/browse/static/**/*.js'],
    languageOptions: { sourceType: 'script', globals: globals.browser },
  },
);
