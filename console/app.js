// The console's entry: log in, then the views by the address's fragment (#/fleet,
// #/device/{id}, #/unknown). The token lives in memory and sessionStorage only.

import { Api } from './api.js';
import { DeviceView } from './device.js';
import { $, showOnly } from './dom.js';
import { Fleet } from './fleet.js';
import { ConsoleMap } from './map.js';
import { LiveFeed } from './mqtt-feed.js';
import { UnknownView } from './unknown.js';

const VIEWS = ['fleet-view', 'device-view', 'unknown-view'];
const FEED_TEXT = {
  connecting: 'Live feed: connecting…',
  live: 'Live feed: on',
  down: 'Live feed: off, the list is read again every 10 s',
  none: 'Live feed: not offered by this server, the list is read again every 10 s',
};

const state = { settings: null, map: null, feed: null, fleet: null, device: null, unknown: null, me: null };

const api = new Api(() => {
  stopSession();
  showLogin('Your session ended; log in again.');
});

function can(privilege) {
  const p = state.me?.privileges ?? [];
  return p.includes('admin') || p.includes(privilege);
}

function showLogin(message = '') {
  $('nav').hidden = true;
  $('workspace').hidden = true;
  $('login-view').hidden = false;
  $('login-error').textContent = message;
  $('login-user').focus();
}

function stopSession() {
  state.feed?.stop();
  state.feed = null;
  state.fleet?.stop();
  state.device?.close();
}

/** The live feed: this origin's `/mqtt` (HTTPS and a proxy in front work alike). */
function feedUrl() {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${location.host}${state.settings.mqttWsPath}`;
}

function setFeedState(s) {
  $('feed-status').textContent = FEED_TEXT[s];
  state.fleet?.feedState(s === 'live');
}

async function startSession() {
  $('login-view').hidden = true;
  $('nav').hidden = false;
  $('workspace').hidden = false;
  $('who').textContent = `Logged in as ${api.userName}`;
  state.map ??= new ConsoleMap($('map'), state.settings.tileUrl);
  // who the user is (privileges) is read beside the fleet, not before it
  const me = api.me().catch(() => null);
  // made once: its listeners on the filters stay, a new session starts it again
  state.fleet ??= new Fleet({
    api,
    map: state.map,
    onOpen: (id) => (location.hash = `#/device/${encodeURIComponent(id)}`),
  });
  if (state.settings.mqttWsPath) {
    state.feed = new LiveFeed({
      url: feedUrl(),
      userName: api.userName,
      password: () => api.token,
      onState: setFeedState,
    });
    state.feed.subscribe('live/+/locations', (topic, loc) => state.fleet.location(topic, loc));
  } else setFeedState('none');
  state.device ??= new DeviceView({ api, map: state.map });
  state.device.setFeed(state.feed);
  state.unknown ??= new UnknownView({ api });
  const fleet = state.fleet.start();
  state.me = await me;
  state.unknown.listen(state.feed, can('admin') && !state.me?.group);
  await fleet;
  route();
}

function route() {
  if (!api.token) return;
  const [, view, arg] = location.hash.match(/^#\/(\w+)\/?(.*)$/) ?? [];
  $('nav-fleet').removeAttribute('aria-current');
  $('nav-unknown').removeAttribute('aria-current');
  if (view !== 'device') state.device?.close();
  if (view === 'device' && arg) {
    showOnly(VIEWS, 'device-view');
    state.map.showFleet(false);
    state.device.open(decodeURIComponent(arg), can('write'));
    $('device-title').focus();
  } else if (view === 'unknown') {
    showOnly(VIEWS, 'unknown-view');
    $('nav-unknown').setAttribute('aria-current', 'page');
    state.map.showFleet(true);
    state.unknown.open(can('admin'));
    $('unknown-title').focus();
  } else {
    showOnly(VIEWS, 'fleet-view');
    $('nav-fleet').setAttribute('aria-current', 'page');
    state.map.showFleet(true);
    $('fleet-title').focus();
  }
  state.map.resized();
}

async function main() {
  const res = await fetch('config.json');
  state.settings = await res.json();
  $('login-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    $('login-error').textContent = '';
    try {
      await api.login($('login-user').value.trim(), $('login-key').value);
      $('login-key').value = '';
      await startSession();
    } catch (err) {
      showLogin(err.message);
    }
  });
  $('logout').addEventListener('click', () => {
    stopSession();
    api.logout();
    showLogin();
  });
  window.addEventListener('hashchange', route);
  // the fragment names the view: the skip link moves the focus instead of changing it
  document.querySelector('.skip').addEventListener('click', (e) => {
    e.preventDefault();
    $('main').focus();
  });
  if (api.token) await startSession();
  else showLogin();
}

main();
