// The type each downloaded file (attachment, job log) is sent with: nothing a browser could run as a page of rq's origin.
import { describe, expect, it } from 'vitest';
import { contentTypeOf } from '../../src/web/send-file.js';

describe('contentTypeOf', () => {
  it.each([
    ['out.json', 'application/json'],
    ['stdio.log', 'text/plain; charset=utf-8'],
    ['notes.txt', 'text/plain; charset=utf-8'],
    ['table.csv', 'text/plain; charset=utf-8'],
    // Markup is text: an attachment must not run script under rq's origin.
    ['page.html', 'text/plain; charset=utf-8'],
    ['page.htm', 'text/plain; charset=utf-8'],
    ['feed.xml', 'text/plain; charset=utf-8'],
    ['icon.svg', 'text/plain; charset=utf-8'],
    ['a.jpg', 'image/jpeg'],
    ['a.jpeg', 'image/jpeg'],
    ['a.png', 'image/png'],
    ['a.gif', 'image/gif'],
    ['a.webp', 'image/webp'],
    ['doc.pdf', 'application/pdf'],
    ['x.gz', 'application/gzip'],
    ['x.zip', 'application/zip'],
    ['x.tar', 'application/x-tar'],
    ['PAGE.HTML', 'text/plain; charset=utf-8'],
    ['data.bin', 'application/octet-stream'],
    ['no-extension', 'application/octet-stream'],
    ['.html', 'application/octet-stream'],
  ])('%s is sent as %s', (file, type) => expect(contentTypeOf(file)).toBe(type));
});
