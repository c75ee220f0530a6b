// DOM helpers: every text from the API goes in as text, never as markup.

export const $ = (id) => document.getElementById(id);

/** h('td', {class: 'x'}, 'text', child): an element with attributes (on* as listeners) and children. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === undefined || child === null) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** A local, readable time ("2026-11-21 09:00:00") of an ISO instant; '' for none. */
export function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** The value of a datetime-local input for a Date (local time, seconds). */
export function localInput(d) {
  return when(d.toISOString()).replace(' ', 'T');
}

/** Status as words and a symbol, so it reads without colour. */
export const STATUS_TEXT = { online: '● online', offline: '○ offline', expired: '✕ expired' };

/** "40.41680, -3.70380" */
export const position = (l) => (l ? `${l.latitude.toFixed(5)}, ${l.longitude.toFixed(5)}` : '');

/** "52 km/h"; '' without a speed */
export const speed = (l) => (l && typeof l.speed === 'number' ? `${Math.round(l.speed)} km/h` : '');

/** "12.35 km" */
export const km = (n) => `${n.toFixed(2)} km`;

/** Seconds as "1 h 05 min", "7 min 30 s", "45 s". */
export function duration(seconds) {
  const s = Math.round(seconds);
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  if (hours > 0) return `${hours} h ${String(minutes).padStart(2, '0')} min`;
  if (minutes > 0) return `${minutes} min ${String(s % 60).padStart(2, '0')} s`;
  return `${s} s`;
}

/** Hex in groups of two, sixteen bytes a line. */
export function hexLines(hex) {
  const pairs = hex.match(/../g) ?? [];
  const lines = [];
  for (let i = 0; i < pairs.length; i += 16) lines.push(pairs.slice(i, i + 16).join(' '));
  return lines.join('\n');
}

export function showOnly(ids, visible) {
  for (const id of ids) $(id).hidden = id !== visible;
}
