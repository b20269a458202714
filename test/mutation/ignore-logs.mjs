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

/** `log.warn(…)` and the like: a call of a pino level method on a logger. */
function isLogCall(call) {
  if (call.type !== 'CallExpression' || call.callee.type !== 'MemberExpression') return false;
  const { object, property } = call.callee;
  return property.type === 'Identifier' && LEVELS.has(property.name) && isLogger(object);
}

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, 'log-calls', {
    shouldIgnore(path) {
      // A statement that only logs, and a handler that only logs (`.catch((err) => log.warn(…))`): emptying
      // such a handler still swallows the error, so only the log line differs.
      if (path.isExpressionStatement() && isLogCall(path.node.expression)) return 'a pino log call: its wording is for people, not pinned by tests';
      if (path.isArrowFunctionExpression() && isLogCall(path.node.body))
        return 'a handler that only makes a pino log call: its wording is for people, not pinned by tests';
      return undefined;
    },
  }),
];
