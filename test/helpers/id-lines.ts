// How a page draws its message ids: each id's lines as the browser laid them out (from each character's box), whether one breaks between two digits, and whether a shortened one keeps its whole id in a title.
import type { Frame, Page } from 'playwright-core';

export interface DrawnId {
  /** The id as drawn, a `⏎` where a line ends inside it. */
  lines: string;
  /** A line ends between two of its digits. */
  midNumber: boolean;
  /** Part of it is cut off by a box that hides its overflow (an ellipsis). */
  clipped: boolean;
  /** The title nearest the id (its element's or an ancestor's). */
  title: string | null;
  /** Where it is: its element's tag, id and classes. */
  where: string;
}

/** Every message id drawn on the page or frame (hidden ones left out); ids split over several text nodes (`<wbr>`) count as one. */
export function drawnIds(target: Page | Frame): Promise<DrawnId[]> {
  return target.evaluate(() => {
    const ID = /\.?\d{8}\.\d{4}\.\d{2}\.\d{3}\.\d+/g;
    const nodes: { node: Text; start: number }[] = [];
    let text = '';
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode() as Text | null; n; n = walker.nextNode() as Text | null) {
      if (n.parentElement?.closest('script, style, template')) continue;
      nodes.push({ node: n, start: text.length });
      text += n.data;
    }
    const nodeAt = (i: number) => {
      let k = nodes.length - 1;
      while (k > 0 && nodes[k].start > i) k--;
      return nodes[k];
    };
    /** The nearest ancestor that cuts off what overflows it (not one that scrolls: what it hides can be scrolled to). */
    const clipOf = (el: Element | null) => {
      for (let e = el; e && e !== document.body; e = e.parentElement) {
        const s = getComputedStyle(e);
        if (['hidden', 'clip'].includes(s.overflowX)) return e;
      }
      return null;
    };
    const out: DrawnId[] = [];
    for (const m of text.matchAll(ID)) {
      const boxes: DOMRect[] = [];
      let first: Element | null = null;
      for (let i = m.index; i < m.index + m[0].length; i++) {
        const { node, start } = nodeAt(i);
        first ??= node.parentElement;
        const r = document.createRange();
        r.setStart(node, i - start);
        r.setEnd(node, i - start + 1);
        const box = r.getClientRects()[0];
        if (box) boxes.push(box);
      }
      // Not drawn (display: none, a closed <details>).
      if (boxes.length !== m[0].length || boxes.every((b) => b.width === 0)) continue;
      let lines = m[0][0];
      let midNumber = false;
      for (let k = 1; k < boxes.length; k++) {
        if (boxes[k].top > boxes[k - 1].top + boxes[k - 1].height / 2) {
          lines += '⏎';
          if (/\d/.test(m[0][k - 1]) && /\d/.test(m[0][k])) midNumber = true;
        }
        lines += m[0][k];
      }
      const clip = clipOf(first)?.getBoundingClientRect();
      const clipped = clip !== undefined && boxes.some((b) => b.right > clip.right + 0.5 || b.left < clip.left - 0.5);
      const where = first ? `${first.tagName.toLowerCase()}${first.id ? `#${first.id}` : ''}${[...first.classList].map((c) => `.${c}`).join('')}` : '';
      out.push({ lines, midNumber, clipped, title: first?.closest('[title]')?.getAttribute('title') ?? null, where });
    }
    return out;
  });
}
