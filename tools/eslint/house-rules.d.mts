// The type of the house rules plugin, for the test that lints snippets with it.
import type { ESLint } from 'eslint';

declare const house: ESLint.Plugin;
export default house;
