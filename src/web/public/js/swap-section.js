// rq UI: a live section refreshed whole: the element of an id taken from a fresh copy of the page and swapped in.

/** A response handler (poll.js, live.js) that replaces the element `id` with the same element of the page in the response. */
export function swapSection(id) {
  return async (res) => {
    if (!res.ok) return;
    const fresh = new DOMParser().parseFromString(await res.text(), 'text/html').getElementById(id);
    const now = document.getElementById(id);
    if (fresh && now) now.replaceWith(document.importNode(fresh, true));
  };
}
