// typescript-eslint's type-checked rules over everything TypeScript in the repository. A rule
// relaxed here says why; anything else is fixed in the code.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'build/', 'coverage/', 'node_modules/', 'src/generated/', '**/*.mjs', '**/*.js'] },
  // The SDK's build output, and its build's copy of src/generated/.
  { ignores: ['clients/typescript/dist/', 'clients/typescript/src/generated/'] },
  // SDK drivers are excluded from tsconfig.json: tests/e2e/consumers/sdks.test.ts copies them next to the
  // clients it generates at run time and compiles them there, so no project here can type-check them.
  { ignores: ['tests/e2e/consumers/drivers/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // `_name` marks a parameter a callback signature requires but this use does not read.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  {
    // Tests read JSON bodies and driver rows whose shape is what they assert; typing every one
    // of them as unknown would only move the `any` into casts.
    files: ['tests/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
