// One device: its track over a time range, its trips, stops and summary, its alerts, commands,
// raw frames live, settings.

import { $, duration, h, hexLines, km, localInput, position, STATUS_TEXT, speed, when } from './dom.js';

const TRACK_PAGES = 20;
const PAGE = 1000;
const MAX_FRAMES = 200;
const TABS = ['track', 'trips', 'alerts', 'commands', 'frames', 'settings'];
const SETTINGS = [
  'name',
  'description',
  'min',
  'model',
  'expires',
  'dailyEmailLimit',
  'dailySmsLimit',
  'alertEmails',
  'alertPhones',
];

export class DeviceView {
  constructor({ api, map, feed }) {
    this.api = api;
    this.map = map;
    this.feed = feed;
    this.unsubscribe = [];
    this.commands = new Map();
    this.paused = false;
    for (const button of document.querySelectorAll('#device-view [data-tab]'))
      button.addEventListener('click', () => this.tab(button.dataset.tab));
    $('track-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.loadRange();
    });
    $('command-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.sendCommand();
    });
    $('settings-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.saveSettings();
    });
    $('frames-pause').addEventListener('click', () => {
      this.paused = !this.paused;
      $('frames-pause').setAttribute('aria-pressed', String(this.paused));
      $('frames-pause').textContent = this.paused ? 'Resume' : 'Pause';
    });
    $('frames-clear').addEventListener('click', () => {
      $('frames-list').replaceChildren();
      this.frameCount = 0;
      this.frameStatus();
    });
  }

  setFeed(feed) {
    this.feed = feed;
  }

  async open(deviceId, canWrite) {
    this.close();
    this.id = deviceId;
    this.canWrite = canWrite;
    this.frameCount = 0;
    this.commands.clear();
    for (const id of [
      'track-rows',
      'trip-rows',
      'stop-rows',
      'trips-summary',
      'alerts-rows',
      'command-rows',
      'frames-list',
    ])
      $(id).replaceChildren();
    for (const id of ['track-status', 'trips-status', 'alerts-status', 'command-status', 'settings-status'])
      $(id).textContent = '';
    const now = new Date();
    $('track-from').value = localInput(new Date(now.getTime() - 24 * 3600_000));
    $('track-to').value = localInput(new Date(now.getTime() + 3600_000));
    $('device-title').textContent = deviceId;
    this.tab('track');
    this.subscribeLive();
    try {
      this.device = (await this.api.get(`/api/devices/${encodeURIComponent(deviceId)}`)).device;
    } catch (e) {
      $('device-summary').textContent = `This device could not be read: ${e.message}`;
      return;
    }
    this.summary();
    this.fillSettings();
    await Promise.all([this.loadRange(), this.loadCommands()]);
  }

  close() {
    for (const off of this.unsubscribe.splice(0)) off();
    this.map.clearTrack();
    this.id = undefined;
  }

  subscribeLive() {
    this.frameStatus();
    if (!this.feed) return;
    const base = `live/${this.id}`;
    this.unsubscribe.push(
      this.feed.subscribe(`${base}/frames`, (_t, f) => this.frame(f)),
      this.feed.subscribe(`${base}/commands`, (_t, c) => this.commandChanged(c)),
      this.feed.subscribe(`${base}/alerts`, (_t, a) => this.alertRow(a, true)),
    );
  }

  tab(name) {
    for (const t of TABS) {
      document.querySelector(`#device-view [data-tab="${t}"]`).setAttribute('aria-pressed', String(t === name));
      document.querySelector(`#device-view [data-panel="${t}"]`).hidden = t !== name;
    }
  }

  summary() {
    const d = this.device;
    $('device-title').textContent = d.name;
    $('device-summary').replaceChildren(
      `Id ${d.id}`,
      d.protocol ? ` · ${d.protocol}` : '',
      d.lastConnection ? ` · last connection ${when(d.lastConnection)}` : ' · never connected',
      d.expired ? ` · ${STATUS_TEXT.expired}` : '',
    );
  }

  range() {
    const from = new Date($('track-from').value);
    const to = new Date($('track-to').value);
    return { from: from.toISOString(), to: to.toISOString() };
  }

  /** The track, the trips and stops, and the alerts of the range in the form. */
  async loadRange() {
    let range;
    try {
      range = this.range();
    } catch {
      $('track-status').textContent = 'Give a start and an end.';
      return;
    }
    await Promise.all([this.loadTrack(range), this.loadTrips(range), this.loadAlerts(range)]);
  }

  async loadTrack(range) {
    const id = this.id;
    $('track-status').textContent = 'Loading…';
    const locations = [];
    let cursor;
    try {
      for (let page = 0; page < TRACK_PAGES; page++) {
        const body = await this.api.post(`/api/devices/${encodeURIComponent(id)}/locations`, {
          ...range,
          limit: PAGE,
          ...(cursor ? { cursor } : {}),
        });
        locations.push(...body.locations);
        cursor = body.nextCursor;
        if (!cursor) break;
      }
    } catch (e) {
      $('track-status').textContent = `The track could not be loaded: ${e.message}`;
      return;
    }
    if (id !== this.id) return;
    this.map.showTrack(locations);
    const cut = cursor ? ` (the first ${locations.length}; narrow the range for the rest)` : '';
    $('track-status').textContent = `${locations.length} positions${cut}`;
    $('track-rows').replaceChildren(
      ...locations.map((l) =>
        h(
          'tr',
          {},
          h(
            'td',
            {},
            h('button', { type: 'button', class: 'link', onclick: () => this.map.select(l) }, when(l.dateTime)),
          ),
          h('td', {}, position(l)),
          h('td', {}, speed(l)),
        ),
      ),
    );
  }

  /** The reports of the range: one summary, the trips and the stops (GET /api/reports/...). */
  async loadTrips(range) {
    const id = this.id;
    $('trips-status').textContent = 'Loading…';
    const query = new URLSearchParams({ deviceId: id, ...range }).toString();
    let summary;
    let trips;
    let stops;
    try {
      [summary, trips, stops] = await Promise.all(
        ['summary', 'trips', 'stops'].map((kind) => this.api.get(`/api/reports/${kind}?${query}`)),
      );
    } catch (e) {
      if (id === this.id) $('trips-status').textContent = `The trips could not be loaded: ${e.message}`;
      return;
    }
    if (id !== this.id) return;
    trips = trips.trips;
    stops = stops.stops;
    const s = summary.summary[0];
    $('trips-status').textContent = `${trips.length} trips, ${stops.length} stops`;
    $('trips-summary').replaceChildren(
      ...(s
        ? [
            ['Distance', km(s.distance)],
            ['Driving', duration(s.drivingTime)],
            ['Stopped', duration(s.stoppedTime)],
            ['Maximum speed', `${Math.round(s.maxSpeed)} km/h`],
            ['Average speed', `${Math.round(s.averageSpeed)} km/h`],
            ...(s.engineHours !== undefined ? [['Engine hours', `${s.engineHours.toFixed(1)} h`]] : []),
          ].flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)])
        : []),
    );
    const at = (time, latitude, longitude) =>
      h(
        'button',
        { type: 'button', class: 'link', onclick: () => this.map.select({ latitude, longitude }) },
        when(time),
      );
    $('trip-rows').replaceChildren(
      ...trips.map((x) =>
        h(
          'tr',
          {},
          h('td', {}, at(x.startTime, x.startLatitude, x.startLongitude)),
          h('td', {}, at(x.endTime, x.endLatitude, x.endLongitude)),
          h('td', {}, duration(x.duration)),
          h('td', {}, km(x.distance)),
          h('td', {}, `${Math.round(x.maxSpeed)} / ${Math.round(x.averageSpeed)} km/h`),
        ),
      ),
    );
    $('stop-rows').replaceChildren(
      ...stops.map((x) =>
        h(
          'tr',
          {},
          h('td', {}, at(x.startTime, x.latitude, x.longitude)),
          h('td', {}, when(x.endTime)),
          h('td', {}, duration(x.duration)),
          h('td', {}, position(x)),
        ),
      ),
    );
  }

  async loadAlerts(range) {
    try {
      const { alerts } = await this.api.post(`/api/devices/${encodeURIComponent(this.id)}/alerts`, {
        ...range,
        limit: PAGE,
      });
      $('alerts-rows').replaceChildren();
      for (const a of alerts) this.alertRow(a, false);
      $('alerts-status').textContent = `${alerts.length} alerts`;
    } catch (e) {
      $('alerts-status').textContent = `The alerts could not be loaded: ${e.message}`;
    }
  }

  alertRow(a, live) {
    const row = h('tr', {}, h('td', {}, when(a.dateTime)), h('td', {}, a.alertName), h('td', {}, a.text ?? ''));
    if (live) $('alerts-rows').prepend(row);
    else $('alerts-rows').append(row);
  }

  async loadCommands() {
    try {
      const { commands } = await this.api.get(`/api/devices/${encodeURIComponent(this.id)}/commands`);
      for (const c of commands.reverse()) this.commandChanged(c);
    } catch (e) {
      $('command-status').textContent = `The commands could not be loaded: ${e.message}`;
    }
  }

  async sendCommand() {
    const command = $('command-text').value;
    const format = $('command-format').value;
    $('command-status').textContent = 'Sending…';
    try {
      const body = await this.api.post(`/api/devices/${encodeURIComponent(this.id)}/sendCommand`, { command, format });
      this.commandChanged(body.command);
      $('command-status').textContent = `Command ${body.command.id}: ${body.command.status}. ${body.result}`;
    } catch (e) {
      $('command-status').textContent = `Not sent: ${e.message}`;
    }
  }

  /** A command as the API or the feed shows it: its row made or replaced, newest first. */
  commandChanged(c) {
    const old = this.commands.get(c.id);
    const row = h(
      'tr',
      { 'data-command': c.id, 'data-status': c.status },
      h('td', {}, c.id),
      h('td', {}, h('code', {}, c.command), h('br'), h('small', {}, c.format)),
      h('td', {}, c.status, h('br'), h('small', {}, when(c.answered ?? c.sent ?? c.created))),
      h('td', {}, c.result ?? ''),
    );
    this.commands.set(c.id, row);
    if (old) old.replaceWith(row);
    else $('command-rows').prepend(row);
  }

  frameStatus() {
    $('frames-status').textContent = this.feed
      ? `${this.frameCount ?? 0} frames since this page opened${this.paused ? ' (paused)' : ''}`
      : 'Raw frames need the live feed (TRACKGATE_MQTT_WS_PORT), which this server does not offer.';
  }

  frame(f) {
    this.frameCount++;
    this.frameStatus();
    if (this.paused) return;
    const malformed = f.outcome === 'malformed';
    const raw = f.hex !== undefined ? hexLines(f.hex) : (f.text ?? '');
    const item = h(
      'li',
      { class: malformed ? 'malformed' : undefined, 'data-outcome': f.outcome },
      h(
        'p',
        {},
        h('strong', {}, malformed ? '⚠ MALFORMED ' : `${f.outcome} `),
        `${when(f.receivedAt)} · ${f.protocol} · ${f.remote ?? ''} · ${f.length} bytes${f.truncated ? ' (cut)' : ''}`,
      ),
      f.error ? h('p', {}, `Why: ${f.error}`) : null,
      h(
        'div',
        { class: 'frame-body' },
        h('div', {}, h('h4', {}, f.hex !== undefined ? 'Bytes (hex)' : 'Text'), h('pre', { class: 'raw' }, raw)),
        h('div', {}, h('h4', {}, 'Decoded'), h('pre', { class: 'decoded' }, JSON.stringify(f.decoded, null, 1))),
      ),
      h('p', {}, 'Reply: ', h('code', {}, f.reply ? hexLines(f.reply) : 'none')),
    );
    const list = $('frames-list');
    list.prepend(item);
    while (list.children.length > MAX_FRAMES) list.lastElementChild.remove();
  }

  fillSettings() {
    const d = this.device;
    const form = $('settings-form');
    for (const name of SETTINGS) {
      const value = d[name];
      form.elements[name].value = Array.isArray(value) ? value.join(', ') : (value ?? '');
      form.elements[name].readOnly = !this.canWrite;
    }
    $('settings-save').hidden = !this.canWrite;
    $('settings-usage').textContent =
      `Sent today: ${d.emailsSentToday} e-mails, ${d.smsSentToday} SMS.${this.canWrite ? '' : ' Your user may read these settings but not change them.'}`;
  }

  /** What the form holds, as the device's fields. */
  settingsValue(name) {
    const raw = $('settings-form').elements[name].value.trim();
    if (name === 'alertEmails' || name === 'alertPhones')
      return raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    if (name === 'dailyEmailLimit' || name === 'dailySmsLimit') return Number(raw);
    if (name === 'name') return raw;
    return raw === '' ? null : raw;
  }

  async saveSettings() {
    const ops = [];
    for (const name of SETTINGS) {
      const value = this.settingsValue(name);
      if (JSON.stringify(value) !== JSON.stringify(this.device[name] ?? (Array.isArray(value) ? [] : null)))
        ops.push({ op: 'replace', path: `/${name}`, value });
    }
    if (ops.length === 0) {
      $('settings-status').textContent = 'Nothing changed.';
      return;
    }
    try {
      this.device = (await this.api.patch(`/api/devices/${encodeURIComponent(this.id)}`, ops)).device;
      this.fillSettings();
      this.summary();
      $('settings-status').textContent = 'Saved.';
    } catch (e) {
      $('settings-status').textContent = `Not saved: ${e.message}`;
    }
  }
}
