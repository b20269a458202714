// A promise and its opener: a test holds a read, a listing or a step until it lets it go, and waits on no clock.
export function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}
