// flagValue: the one reading of a true/false field from JSON, the CLI and HTML forms.
import { describe, expect, it } from 'vitest';
import { flagValue } from '../../src/message/flag.js';

describe('flagValue', () => {
  it('reads JSON booleans, 1/0, and the texts forms and the CLI send', () => {
    for (const t of [true, 'true', '1', 1, 'on']) expect(flagValue(t), JSON.stringify(t)).toBe(true);
    for (const f of [undefined, null, '', false, 'false', '0', 0, 'off']) expect(flagValue(f), JSON.stringify(f)).toBe(false);
  });

  it('is undefined for anything else, so the caller refuses it by name', () => {
    for (const v of ['yes', 'TRUE', 'True', ' 1', 2, -1, 'no', [], {}, 'Stryker was here!']) expect(flagValue(v), JSON.stringify(v)).toBeUndefined();
  });
});
