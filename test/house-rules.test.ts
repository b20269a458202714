// The house rules as lint rules (tools/eslint/house-rules.mjs): each flags what it is for and lets the accepted form through.
import { Linter } from 'eslint';
import { describe, expect, it } from 'vitest';
import house from '../tools/eslint/house-rules.mjs';

const linter = new Linter({ configType: 'flat' });
const lint = (rule: string, code: string) =>
  linter
    .verify(code, [{ plugins: { house }, rules: { [`house/${rule}`]: 'error' }, languageOptions: { ecmaVersion: 2024, sourceType: 'module' } }])
    .map((m) => m.message);

describe('house rules', () => {
  it('no-bare-error: new Error and Error() are flagged; the catalogue and subclasses pass', () => {
    expect(lint('no-bare-error', 'throw new Error("x");')).toHaveLength(1);
    expect(lint('no-bare-error', 'const e = Error("x");')).toHaveLength(1);
    expect(lint('no-bare-error', 'throw RqError.of("RQ_ERR_USAGE", "x"); class A extends Error {}; new TypeError("t");')).toEqual([]);
  });

  it('no-reply-parsing: comparing element 0 with "ok" or "fail" is flagged either way round; other indexes and words pass', () => {
    expect(lint('no-reply-parsing', 'if (r[0] === "ok") f();')).toHaveLength(1);
    expect(lint('no-reply-parsing', 'if ("fail" !== reply[0]) f();')).toHaveLength(1);
    expect(lint('no-reply-parsing', 'if (r[1] === "ok" || r[0] === "pong" || r.head === "fail" || r[0] < "ok") f();')).toEqual([]);
  });

  it("no-reply-parsing: a refusal's text read for what it means is flagged; its code, and texts only shown, pass", () => {
    expect(lint('no-reply-parsing', 'const at = /^messages\\[(\\d+)\\]: /.exec(a.text);')).toHaveLength(1);
    expect(lint('no-reply-parsing', 'if (RE.test(r.text)) f();')).toHaveLength(1);
    expect(lint('no-reply-parsing', 'if (a.text.startsWith("queue not created") || r.text.includes("ENOSPC")) f();')).toHaveLength(2);
    expect(lint('no-reply-parsing', 'if (a.text === "msg not found" || `cannot find message` == r.text) f();')).toHaveLength(2);
    expect(lint('no-reply-parsing', 'const c = codeOfText(a.text);')).toHaveLength(1);
    expect(
      lint('no-reply-parsing', 'if (a.code === "RQ_ERR_NO_SUCH_MSG") log(`refused: ${a.text}`); if (args.text === "") g(); const t = a.text.trim();'),
    ).toEqual([]);
  });

  // Made from parts, so this file does not trip the rule it tests.
  const cite = (...parts: string[]) => parts.join('');
  it('no-issue-numbers: in comments, strings and templates; words like "issues" alone pass', () => {
    expect(lint('no-issue-numbers', cite('// fixed for iss', 'ue 20\nconst a = 1;'))).toHaveLength(1);
    expect(lint('no-issue-numbers', cite('const t = "see Iss', 'ue #18";'))).toHaveLength(1);
    expect(lint('no-issue-numbers', cite('const t = `done (', '#41)`;'))).toHaveLength(1);
    expect(lint('no-issue-numbers', '// issues of the disk, 20 of them\nconst t = "an issue, then 20";')).toEqual([]);
  });
  it('only-transitions-move: a spool rename or removal and an index change are flagged; reads and other receivers pass', () => {
    expect(
      lint('only-transitions-move', 'await this.d.spool.beginMove(id, "run", "que", note); spool.moveNow(id, "que", "run", n); await spool.remove("que", id);'),
    ).toHaveLength(3);
    expect(
      lint('only-transitions-move', 'this.d.index.enqueue(msg); index.dequeue(id); q.index.addFinished("err", 1); this.d.index.park(m, "limit");'),
    ).toHaveLength(4);
    expect(lint('only-transitions-move', 'await ends.move(id, "run", "err", n);')).toHaveLength(1);
    expect(
      lint(
        'only-transitions-move',
        'index.queued(id); index.liveState(id); spool.readMessage("que", id); list.remove(x); this.tagIndex.change(id, []); heap.enqueue(x); moves.enqueue(m);',
      ),
    ).toEqual([]);
  });
});
