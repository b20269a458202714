// The project's own rules as lint rules: coded errors, replies read only in src/ipc/, texts that say why rather than cite a ticket.

/** `new Error(...)` / `Error(...)` in src/: errors come from the catalogue (src/errors.ts) so their codes travel with them. */
const noBareError = {
  meta: { type: 'problem', messages: { bare: 'A bare Error loses its code: use RqError.of(<catalogue code>, ...) from src/errors.ts.' }, schema: [] },
  create(context) {
    const check = (node) => {
      if (node.callee.type === 'Identifier' && node.callee.name === 'Error') context.report({ node, messageId: 'bare' });
    };
    return { NewExpression: check, CallExpression: check };
  },
};

/**
 * A socket reply is read by the typed client of its socket (src/ipc/), never by matching `["ok", ...]`
 * tuples by hand; and a refusal is told by the code that came with it, never by reading its text
 * (`a.text.startsWith(...)`, `/^messages\[/.exec(a.text)`, `a.text === 'msg not found'`).
 */
const TEXT_READS = new Set(['startsWith', 'endsWith', 'includes', 'match', 'matchAll', 'search', 'indexOf']);
const noReplyParsing = {
  meta: {
    type: 'problem',
    messages: {
      parse: 'Reply tuples are read in src/ipc/ (answer.ts, the typed clients), not by hand.',
      text: "A refusal's text is for people: act on its code (a.code, err.code), which rq's clients receive with it.",
    },
    schema: [],
  },
  create(context) {
    const isVerb = (n) => n && n.type === 'Literal' && (n.value === 'ok' || n.value === 'fail');
    const isIndex0 = (n) => n && n.type === 'MemberExpression' && n.computed && n.property.type === 'Literal' && n.property.value === 0;
    /** `<x>.text`: what a refusal (Answer, Refusal) says. */
    const isText = (n) => n && n.type === 'MemberExpression' && !n.computed && n.property.type === 'Identifier' && n.property.name === 'text';
    // A non-empty text: an empty one is no refusal (a search's `text: ''` is asked for nothing).
    const isString = (n) => n && ((n.type === 'Literal' && typeof n.value === 'string' && n.value !== '') || n.type === 'TemplateLiteral');
    return {
      BinaryExpression(node) {
        if (!['===', '!==', '==', '!='].includes(node.operator)) return;
        if ((isVerb(node.right) && isIndex0(node.left)) || (isVerb(node.left) && isIndex0(node.right))) context.report({ node, messageId: 'parse' });
        else if ((isText(node.left) && isString(node.right)) || (isText(node.right) && isString(node.left))) context.report({ node, messageId: 'text' });
      },
      CallExpression(node) {
        const c = node.callee;
        // The catalogue once mapped texts back to codes; a text read for its code is the same thing by hand.
        if (c.type === 'Identifier' && c.name === 'codeOfText') return context.report({ node, messageId: 'text' });
        if (c.type !== 'MemberExpression' || c.computed || c.property.type !== 'Identifier') return;
        if (TEXT_READS.has(c.property.name) && isText(c.object)) context.report({ node, messageId: 'text' });
        else if ((c.property.name === 'test' || c.property.name === 'exec') && isText(node.arguments[0])) context.report({ node, messageId: 'text' });
      },
    };
  },
};

/** Code, comments and texts speak of the product: a ticket number says nothing to a reader of the code. */
const ISSUE = /\bissues? #?\d+\b|\(#\d+\)/i;
const noIssueNumbers = {
  meta: { type: 'suggestion', messages: { cite: 'Say why, not which issue: "{{text}}".' }, schema: [] },
  create(context) {
    const source = context.sourceCode;
    const report = (node, loc, text) => context.report({ node, loc, messageId: 'cite', data: { text: text.slice(0, 60) } });
    return {
      Program(node) {
        for (const c of source.getAllComments()) {
          const m = ISSUE.exec(c.value);
          if (m) report(node, c.loc, m[0]);
        }
      },
      Literal(node) {
        if (typeof node.value === 'string' && ISSUE.test(node.value)) report(node, node.loc, node.value);
      },
      TemplateElement(node) {
        if (ISSUE.test(node.value.raw)) report(node, node.loc, node.value.raw);
      },
    };
  },
};

/** What moves a message on disk (QueueSpool), and what changes the queue's memory of it (MessageIndex). */
const SPOOL_MOVES = new Set(['moveNow', 'beginMove', 'move', 'remove']);
const INDEX_CHANGES = new Set([
  'addPrep',
  'takePrep',
  'enqueue',
  'dequeue',
  'park',
  'unpark',
  'changeParked',
  'addRun',
  'removeRun',
  'fold',
  'unfold',
  'dropFolded',
  'setFinished',
  'addFinished',
  'takeExpired',
  'rekeyDeadlines',
]);

/** The last name of a call's receiver: `this.d.spool.move(...)` → `spool`. */
function receiverName(callee) {
  const obj = callee.object;
  if (obj.type === 'Identifier') return obj.name;
  if (obj.type === 'MemberExpression' && !obj.computed && obj.property.type === 'Identifier') return obj.property.name;
  return '';
}

/** Only the transitions module (src/queue/transitions/) changes a message's state: a rename, a removal or an index change anywhere else has no single owner. */
const onlyTransitionsMove = {
  meta: { type: 'problem', messages: { move: "{{what}} changes a message's state: go through the transitions module (src/queue/transitions/)." }, schema: [] },
  create(context) {
    return {
      CallExpression(node) {
        const callee = node.callee;
        if (callee.type !== 'MemberExpression' || callee.computed || callee.property.type !== 'Identifier') return;
        const method = callee.property.name;
        const on = receiverName(callee);
        const spoolMove = SPOOL_MOVES.has(method) && /spool|^ends$/i.test(on);
        const indexChange = INDEX_CHANGES.has(method) && /index$/i.test(on) && on !== 'TagIndex';
        if (spoolMove || indexChange) context.report({ node, messageId: 'move', data: { what: `${on}.${method}` } });
      },
    };
  },
};

export default {
  rules: { 'no-bare-error': noBareError, 'no-reply-parsing': noReplyParsing, 'no-issue-numbers': noIssueNumbers, 'only-transitions-move': onlyTransitionsMove },
};
