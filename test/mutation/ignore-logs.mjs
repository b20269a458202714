// Stryker ignorer (stryker.config.mjs): mutants inside pino log calls (log.info(...), run.log.warn(...)) are
// not counted. What a log line says is for people; a test pinning its wording would only freeze prose.
import { PluginKind, declareValuePlugin } from '@stryker-mutator/api/plugin';

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);

/** `log`, `this.log`, `x.log`, `deps.log`, `d.log`…: any receiver whose last name part is `log`. */
function isLogger(node) {
  if (node.type === 'Identifier') return node.name === 'log';
  if (node.type === 'MemberExpression' && node.property.type === 'Identifier') return node.property.name === 'log';
  return false;
}

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, 'log-calls', {
    shouldIgnore(path) {
      if (!path.isExpressionStatement()) return undefined;
      const call = path.node.expression;
      if (call.type !== 'CallExpression' || call.callee.type !== 'MemberExpression') return undefined;
      const { object, property } = call.callee;
      if (property.type === 'Identifier' && LEVELS.has(property.name) && isLogger(object)) return 'a pino log call: its wording is for people, not pinned by tests';
      return undefined;
    },
  }),
];
