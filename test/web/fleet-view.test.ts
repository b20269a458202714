// The fleet page's body (views/fleet-view.ts) from a fleet view: a URL that is not http(s) is text, never a link; gone hosts without a since; etcd unreachable.
import { describe, expect, it } from 'vitest';
import { fleetView } from '../../src/web/views/fleet-view.js';
import type { FleetView } from '../../src/ipc/fleet-reply.js';

const NOW = new Date('2026-12-02T12:00:00Z');
const view: FleetView = {
  fleet: 'prod',
  host: 'a',
  member: { state: 'member', since: '2026-12-02T11:55:00Z' },
  etcd: { endpoints: ['http://10.0.0.1:2379'], reachable: false },
  hosts: [
    { host: 'a', state: 'up', url: 'javascript:alert(1)', since: '2026-12-02T11:55:00Z', queues: {} },
    { host: 'b', state: 'gone', url: 'HTTPS://b.example/', since: null, queues: {} },
  ],
};

describe('fleetView', () => {
  const body = fleetView(view, NOW).value;

  it('links only an http(s) URL', () => {
    expect(body).toContain('<span class="host-url">javascript:alert(1)</span>');
    expect(body).not.toContain('href="javascript');
    expect(body).toContain('<a class="host-url" href="HTTPS://b.example/" rel="noopener noreferrer">HTTPS://b.example/</a>');
  });

  it('says since when, or unknown for a host no host saw go', () => {
    expect(body).toContain('<time datetime="2026-12-02T11:55:00Z">2026-12-02T11:55:00Z</time> <span class="muted">(5 mins ago)</span>');
    expect(/<tbody id="host-b"[^>]*>[\s\S]*?<span class="muted">unknown<\/span>/.test(body)).toBe(true);
  });

  it('says the hosts are as last seen while etcd does not answer', () => {
    expect(body).toContain('<p class="bad" id="fleet-stale">etcd (http://10.0.0.1:2379) does not answer: hosts as last seen</p>');
  });
});
