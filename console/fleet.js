// The fleet: every device with its status and last position (GET /api/lastLocations), filtered
// here, on the map and in a list, kept current by the live feed (or by polling without it).

import { $, h, STATUS_TEXT, speed, when } from './dom.js';

/** rows drawn at most: the search narrows a larger fleet */
const MAX_ROWS = 500;
const POLL_MS = 10_000;
const REFRESH_MS = 60_000;

export class Fleet {
  constructor({ api, map, onOpen }) {
    this.api = api;
    this.map = map;
    this.onOpen = onOpen;
    /** deviceId -> {deviceId, name, status, lastSeen?, lastLocation} */
    this.entries = new Map();
    this.sorted = [];
    for (const id of ['fleet-search', 'fleet-status']) $(id).addEventListener('input', () => this.render());
    $('fleet-group').addEventListener('change', () => this.load());
    $('fleet-filters').addEventListener('submit', (e) => e.preventDefault());
  }

  async start() {
    // not the poll: the feed's state (set before the start) decides that
    clearInterval(this.refresh);
    this.entries = new Map();
    this.sorted = [];
    this.map.keepOnly(new Set());
    $('fleet-group').replaceChildren(h('option', { value: '' }, 'All groups'));
    await Promise.all([this.loadGroups(), this.load()]);
    this.refresh = setInterval(() => this.load(), REFRESH_MS);
  }

  stop() {
    clearInterval(this.refresh);
    clearInterval(this.poll);
  }

  /** The feed is up: live updates; down: poll the list instead. */
  feedState(live) {
    clearInterval(this.poll);
    if (!live) this.poll = setInterval(() => this.load(), POLL_MS);
  }

  async loadGroups() {
    try {
      const { groups } = await this.api.get('/api/groups');
      const select = $('fleet-group');
      for (const g of groups) select.append(h('option', { value: g.id }, g.name));
    } catch {
      // a user who may not list groups filters without them
    }
  }

  async load() {
    const group = $('fleet-group').value;
    try {
      const { lastLocations } = await this.api.get(
        `/api/lastLocations${group ? `?groupId=${encodeURIComponent(group)}` : ''}`,
      );
      if (!this.rendered) performance.mark('fleet-fetched');
      this.entries = new Map(lastLocations.map((e) => [e.deviceId, e]));
      this.sorted = lastLocations
        .slice()
        .sort((a, b) => a.name.localeCompare(b.name) || (a.deviceId < b.deviceId ? -1 : 1));
      for (const e of lastLocations) this.map.setDevice(e, this.onOpen);
      this.map.keepOnly(new Set(this.entries.keys()));
      // the map shows the fleet once, when it first has positions; later the operator's view is kept
      if (!this.fitted && this.map.markers.size > 0) {
        this.map.fitFleet();
        this.fitted = true;
      }
      $('fleet-count').classList.remove('error');
      this.render();
      // for bench/console.bench.ts: the fleet first drawn with its devices
      if (!this.rendered && lastLocations.length) performance.mark('fleet-rendered');
      this.rendered ||= lastLocations.length > 0;
    } catch (e) {
      $('fleet-count').textContent = `The fleet could not be loaded: ${e.message}`;
      $('fleet-count').classList.add('error');
    }
  }

  /** A location from the feed (live/{deviceId}/locations). */
  location(topic, loc) {
    const deviceId = topic.split('/')[1];
    const entry = this.entries.get(deviceId);
    if (!entry) {
      // a device made since the list was read (or outside the group shown): read the list again, once
      if (!$('fleet-group').value) this.reloadSoon();
      return;
    }
    if (!entry.lastLocation || entry.lastLocation.dateTime <= loc.dateTime) entry.lastLocation = loc;
    if (entry.status !== 'expired') {
      entry.status = 'online';
      delete entry.lastSeen;
    }
    this.map.setDevice(entry, this.onOpen);
    this.renderSoon();
  }

  reloadSoon() {
    if (this.reloading) return;
    this.reloading = setTimeout(async () => {
      await this.load();
      this.reloading = undefined;
    }, 250);
  }

  renderSoon() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = undefined;
      this.render();
      // for bench/console.bench.ts: a location from the feed is on the page
      performance.mark('fleet-live-update');
    });
  }

  visible() {
    const q = $('fleet-search').value.trim().toLowerCase();
    const status = $('fleet-status').value;
    return this.sorted.filter(
      (e) =>
        (!status || e.status === status) &&
        (!q || e.name.toLowerCase().includes(q) || e.deviceId.toLowerCase().includes(q)),
    );
  }

  render() {
    const shown = this.visible();
    const rows = shown.slice(0, MAX_ROWS).map((e) => this.row(e));
    // a live update redraws the rows: the keyboard's place in the list is kept
    const focused = document.activeElement?.closest('#fleet-rows tr')?.dataset.device;
    $('fleet-rows').replaceChildren(...rows);
    if (focused)
      rows
        .find((r) => r.dataset.device === focused)
        ?.querySelector('a')
        ?.focus();
    const more = shown.length > MAX_ROWS ? `; the first ${MAX_ROWS} are listed, search to narrow` : '';
    $('fleet-count').textContent = `${shown.length} of ${this.entries.size} devices${more}`;
  }

  row(e) {
    const seen = e.status === 'online' ? (e.lastLocation?.serverTime ?? e.lastLocation?.dateTime) : e.lastSeen;
    return h(
      'tr',
      { 'data-device': e.deviceId },
      h(
        'td',
        {},
        h('a', { href: `#/device/${encodeURIComponent(e.deviceId)}` }, e.name),
        h('br'),
        h('small', {}, e.deviceId),
      ),
      h(
        'td',
        { class: `status-${e.status}` },
        STATUS_TEXT[e.status] ?? e.status,
        e.transport ? ` (${e.transport})` : '',
      ),
      h('td', {}, seen ? when(seen) : e.status === 'online' ? 'now' : 'never'),
      h('td', {}, speed(e.lastLocation)),
    );
  }
}
