// Unknown devices: identifiers whose frames match no device (live/unknown/frames, admins of no
// group), each with a button that creates the device; and the account's expired devices that
// still try to connect (GET /api/unknownDevices).

import { $, h, when } from './dom.js';

export class UnknownView {
  constructor({ api }) {
    this.api = api;
    /** identifier -> {identifier, protocol, remote, lastFrame, frames} */
    this.seen = new Map();
  }

  /** Listens from login on: an installer's tracker is seen before anyone opens this page. */
  listen(feed, isAdmin) {
    this.off?.();
    this.off = undefined;
    if (!feed || !isAdmin) return;
    this.off = feed.subscribe('live/unknown/frames', (_t, f) => {
      const identifier = f.decoded?.identity;
      if (!identifier) return;
      const s = this.seen.get(identifier) ?? { identifier, frames: 0 };
      Object.assign(s, { protocol: f.protocol, remote: f.remote, lastFrame: f.receivedAt, frames: s.frames + 1 });
      this.seen.set(identifier, s);
      if (!$('unknown-view').hidden) this.renderSeen();
    });
  }

  async open(isAdmin) {
    this.renderSeen();
    if (!isAdmin) {
      $('unknown-status').textContent = 'Only admins see unknown devices.';
      $('expired-rows').replaceChildren();
      return;
    }
    $('unknown-status').textContent = '';
    try {
      const { unknownDevices } = await this.api.get('/api/unknownDevices');
      $('expired-rows').replaceChildren(
        ...unknownDevices.map((u) =>
          h(
            'tr',
            {},
            h('td', {}, h('a', { href: `#/device/${encodeURIComponent(u.identifier)}` }, u.identifier)),
            h('td', {}, u.protocol),
            h('td', {}, when(u.lastSeen)),
            h('td', {}, u.attempts),
          ),
        ),
      );
    } catch (e) {
      $('unknown-status').textContent = `The list could not be loaded: ${e.message}`;
    }
  }

  renderSeen() {
    const rows = [...this.seen.values()]
      .sort((a, b) => (a.lastFrame < b.lastFrame ? 1 : -1))
      .map((s) =>
        h(
          'tr',
          { 'data-identifier': s.identifier },
          h('td', {}, s.identifier),
          h('td', {}, s.protocol),
          h('td', {}, `${when(s.lastFrame)}${s.remote ? ` from ${s.remote}` : ''}`),
          h('td', {}, s.frames),
          h(
            'td',
            {},
            h(
              'button',
              { type: 'button', 'aria-label': `Create device ${s.identifier}`, onclick: () => this.create(s) },
              'Create device',
            ),
          ),
        ),
      );
    $('unknown-rows').replaceChildren(
      ...(rows.length ? rows : [h('tr', {}, h('td', { colspan: 5 }, 'No unknown identifier since this page opened.'))]),
    );
  }

  async create(s) {
    try {
      await this.api.post('/api/devices', { id: s.identifier, name: `${s.protocol} ${s.identifier}` });
      this.seen.delete(s.identifier);
      this.renderSeen();
      $('unknown-status').textContent =
        `Device ${s.identifier} created; its tracker is accepted from its next connection.`;
    } catch (e) {
      $('unknown-status').textContent = `Device ${s.identifier} not created: ${e.message}`;
    }
  }
}
