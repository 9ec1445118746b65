// Prettier (`npm run format`): the code's own style — single quotes, semicolons,
// trailing commas, 2 spaces — at a width of 160. The code is written wide (a
// throw with its hint on one line); 160 keeps most of those lines as they are
// and breaks only the widest (up to 320). Every option is set, not left to a
// default, and the version is pinned in package.json, so the same code always
// formats the same way. What Prettier leaves alone is in .prettierignore.
/** @type {import('prettier').Config} */
export default {
  printWidth: 160,
  tabWidth: 2,
  useTabs: false,
  semi: true,
  singleQuote: true,
  quoteProps: 'as-needed',
  trailingComma: 'all',
  bracketSpacing: true,
  arrowParens: 'always',
  endOfLine: 'lf',
  objectWrap: 'preserve',
  // Text inside template literals (READMEs, HCL, JSON that tests compare byte for byte) stays as written.
  embeddedLanguageFormatting: 'off',
};
