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

/** A socket reply is read by the typed client of its socket (src/ipc/), never by matching `["ok", ...]` tuples by hand. */
const noReplyParsing = {
  meta: { type: 'problem', messages: { parse: 'Reply tuples are read in src/ipc/ (answer.ts, the typed clients), not by hand.' }, schema: [] },
  create(context) {
    const isVerb = (n) => n && n.type === 'Literal' && (n.value === 'ok' || n.value === 'fail');
    const isIndex0 = (n) => n && n.type === 'MemberExpression' && n.computed && n.property.type === 'Literal' && n.property.value === 0;
    return {
      BinaryExpression(node) {
        if (!['===', '!==', '==', '!='].includes(node.operator)) return;
        if ((isVerb(node.right) && isIndex0(node.left)) || (isVerb(node.left) && isIndex0(node.right))) context.report({ node, messageId: 'parse' });
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

export default { rules: { 'no-bare-error': noBareError, 'no-reply-parsing': noReplyParsing, 'no-issue-numbers': noIssueNumbers } };
