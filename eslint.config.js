// `npm run lint`: type-aware rules over the TypeScript sources. Formatting is Prettier's job
// (`npm run format:check`), not ESLint's.
const tseslint = require('typescript-eslint');

module.exports = tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '**/dist/**', 'coverage/**', 'bench/profiles/**'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: {
        project: ['./tsconfig.eslint.json', './src/playground/app/tsconfig.json'],
        tsconfigRootDir: __dirname,
      },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits loses its rejection (an unhandled rejection ends the process) and
      // its ordering; fire-and-forget is written `void`, with why when it is not obvious.
      '@typescript-eslint/no-floating-promises': 'error',
      // An async function where a callback's result is ignored (an event listener, forEach, an
      // express handler typed as returning void) drops its rejection the same way.
      '@typescript-eslint/no-misused-promises': 'error',
      // A switch over a union names every member or says default: a new event type or state is
      // then a compile-time finding wherever it must be handled.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
);
