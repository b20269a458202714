// Dependencies between hosts of a fleet (docs/fleet.md): another host's message checked against the fleet as rq-mgr sees it, and add_dependent, dependency_resolved and the existence check sent to that host's HTTP API.
import { type ErrorCode, RqError } from '../../errors.js';
import { type Answer, answer, isObject, isString, refusalError } from '../../ipc/answer.js';
import { type FleetView, type PeerCredential, basicAuthorization, trustedHosts } from '../../ipc/fleet-reply.js';
import { fleetRefOf } from '../../message/fleet-ref.js';
import type { State } from '../../message/states.js';
import type { DependencyState, Notified } from './dependency-outbox.js';

export interface FleetRefsDeps {
  /** This host's advertised URL without its trailing slash: `<selfUrl>/q/<queue>/<id>` is how other hosts name its messages. */
  selfUrl: string;
  /** rq-mgr's view of the fleet. */
  fleet: () => Promise<Answer<FleetView>>;
  /** What this host's calls to the others carry, so a host with basic_auth lets them in (rq-mgr's `fleet_credential`). */
  credential: () => Promise<Answer<PeerCredential>>;
  timeoutMs?: number;
}

const TIMEOUT_MS = 10_000;
const VIEW_REUSE_MS = 1000;
/** Hosts a refusal lists as the ones whose messages could be named. */
const SHOWN_HOSTS = 5;
/** Refusals that say the message is no more; any other is asked again later. */
const GONE: ReadonlySet<ErrorCode> = new Set(['RQ_ERR_NO_SUCH_MSG', 'RQ_ERR_QUEUE_NOT_FOUND']);
const isState = (v: unknown): v is DependencyState => isObject(v) && isString(v.state);

/** A call's answer, whether it carried the fleet's secret, and whether that secret was held from before the call. */
interface Sent {
  res: Response;
  withSecret: boolean;
  held: boolean;
}

export class FleetRefs {
  private view: { at: number; answer: Promise<Answer<FleetView> | { ok: false; text: string }> } | null = null;

  /** The Authorization header, once rq-mgr gave the fleet's credentials (asked again at each call until then). */
  private authorization: string | null = null;

  constructor(private readonly d: FleetRefsDeps) {}

  /**
   * A call to `ref`'s host, with the headers `headers` gives it, and whether they carried the fleet's secret. A 401 to the
   * secret drops it, so the next call asks rq-mgr again; to one held from an earlier call (the secret may have changed
   * since), at once, and the call is made once more.
   */
  private async call(ref: string, url: string, init: { method?: string; body?: string }, more: Record<string, string> = {}): Promise<Sent> {
    const send = async (): Promise<Sent> => {
      const held = this.authorization !== null;
      const headers = await this.headers(ref, more);
      const res = await fetch(url, { ...init, headers, signal: AbortSignal.timeout(this.d.timeoutMs ?? TIMEOUT_MS) });
      const withSecret = headers.authorization !== undefined;
      if (res.status === 401 && withSecret) this.authorization = null;
      return { res, withSecret, held };
    };
    const first = await send();
    if (first.res.status !== 401 || !first.withSecret || !first.held) return first;
    await first.res.arrayBuffer();
    return send();
  }

  /**
   * Headers of a call about `ref` to its host: `accept` and the rest, with the fleet's credentials
   * when known and the host is up in the fleet at that URL now (a host that left, or whatever got its
   * address, is asked without them: one behind basic_auth answers 401, and the call is made again later).
   */
  private async headers(ref: string, more: Record<string, string>): Promise<Record<string, string>> {
    const view = await this.fleetNow();
    const member = view.ok && fleetRefOf(ref, trustedHosts(view.value)) !== null;
    if (!member) return { accept: 'application/json', ...more };
    if (this.authorization === null) {
      const a = await this.d.credential().catch(() => null);
      if (a?.ok) this.authorization = basicAuthorization(a.value);
    }
    return { accept: 'application/json', ...more, ...(this.authorization ? { authorization: this.authorization } : {}) };
  }

  /**
   * rq-mgr's view, asked once for all the refs of a create (a view a second old is as good). A failed answer is not kept:
   * the next call asks again, so rq-mgr restarting as the queue starts does not refuse the creates of the second after.
   */
  private fleetNow(): Promise<Answer<FleetView> | { ok: false; text: string }> {
    const now = Date.now();
    if (!this.view || now - this.view.at > VIEW_REUSE_MS) {
      const answer = this.d.fleet().catch((err: Error) => ({ ok: false as const, text: err.message }));
      this.view = { at: now, answer };
      void answer.then((a) => {
        if (!a.ok && this.view?.answer === answer) this.view = null;
      });
    }
    return this.view.answer;
  }

  /** `<queue>/<id>` of this host as other hosts name it. */
  own(ref: string): string {
    return `${this.d.selfUrl}/q/${ref}`;
  }

  /**
   * The ref `text` (a full id, `field` of a create) in its one spelling: `<queue>/<id>` when it is
   * this host's, `<url>/q/<queue>/<id>` of another host of the fleet that is up now; refused otherwise.
   */
  async canonical(text: string, field: string): Promise<string> {
    const self = fleetRefOf(text, [{ host: '', url: this.d.selfUrl }]);
    if (self) return self.ref.slice(this.d.selfUrl.length + 3);
    const a = await this.fleetNow();
    if (!a.ok) throw RqError.of('RQ_ERR_BAD_DEPENDENCY', `${field}: the fleet could not be read (${a.text}), so ${text} could not be checked`);
    const up = a.value.hosts.filter((h) => h.state === 'up' && h.host !== a.value.host);
    const r = fleetRefOf(text, up);
    const shown = up.slice(0, SHOWN_HOSTS).map((h) => `${h.url}/q/...`);
    if (up.length > SHOWN_HOSTS) shown.push(`${up.length - SHOWN_HOSTS} more`);
    const hosts = shown.join(', ') || 'no other host is up';
    if (!r) {
      // A host of the fleet that is gone: said, since the ref is right and only the host is missing.
      const gone = a.value.hosts.find((h) => h.state === 'gone' && fleetRefOf(text, [h]));
      const why = gone ? `, a message of host ${gone.host}, gone since ${gone.since ?? 'an unknown time'}` : '';
      throw RqError.of(
        'RQ_ERR_BAD_DEPENDENCY',
        `${field}: expected the full id of a message of another host of fleet ${a.value.fleet} that is up (${hosts}), received ${JSON.stringify(text)}${why}`,
      );
    }
    return r.ref;
  }

  /** Is the message `ref` on its host? A text when the host did not answer. */
  async exists(ref: string): Promise<boolean | string> {
    try {
      const { res, withSecret } = await this.call(ref, `${ref}/state.json`, {});
      await res.arrayBuffer();
      if (res.status === 200) return true;
      if (res.status === 401 && withSecret) return `${ref}/state.json answered 401: that host did not take this fleet's secret`;
      if (res.status === 401) return `${ref}/state.json answered 401 to a call without the fleet's secret, which this host gives only to hosts up in the fleet`;
      return res.status === 404 ? false : `${ref}/state.json answered ${res.status}`;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** add_dependent on `ref`'s host for `dependent` (`<queue>/<id>` of this host); rejects with RQ_ERR_NO_SUCH_MSG, or when the host did not answer. */
  async register(ref: string, dependent: string): Promise<DependencyState> {
    const a = answer(await this.post(ref, '/dependents', { dependent: this.own(dependent) }), isState);
    // Its queue gone with it: the message is no more.
    if (!a.ok && GONE.has(a.code)) throw RqError.of('RQ_ERR_NO_SUCH_MSG');
    if (!a.ok) throw refusalError(a);
    return { state: a.value.state as State, ...(a.value.outcome ? { outcome: String(a.value.outcome) } : {}) };
  }

  /** dependency_resolved on the dependent's host; why not, when it did not answer. */
  async notify(dependent: string, p: { dependency: string; state: string; outcome?: string }): Promise<Notified> {
    let body: unknown;
    try {
      body = await this.post(dependent, '/resolved', { ...p, dependency: this.own(p.dependency) });
    } catch (err) {
      return { unanswered: (err as Error).message };
    }
    const a = answer(body, (v): v is 'resolved' | 'ignored' => v === 'resolved' || v === 'ignored');
    // A dependent deleted since, or its queue: nobody waits any more.
    if (!a.ok) return GONE.has(a.code) ? 'ignored' : { unanswered: a.text };
    return a.value;
  }

  /** A JSON POST to `ref` + `path`; its JSON answer whatever the status (a refusal carries its code), thrown when the host did not answer. */
  private async post(ref: string, path: string, body: object): Promise<unknown> {
    const url = `${ref}${path}`;
    const { res } = await this.call(ref, url, { method: 'POST', body: JSON.stringify(body) }, { 'content-type': 'application/json' });
    const text = await res.text();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw RqError.of('RQ_ERR_NO_REPLY', `${url} answered ${res.status} with no JSON`);
    }
  }
}
