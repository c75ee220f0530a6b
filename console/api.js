// The REST API with the session's token: kept in memory and sessionStorage (never in a URL).

const KEY = 'trackgate.console.session';

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error ?? `The server answered ${status}.`);
    this.status = status;
    this.code = body?.code;
  }
}

export class Api {
  /** @param {() => void} onExpired called when the token is refused (the session ended) */
  constructor(onExpired) {
    this.onExpired = onExpired;
    const saved = sessionStorage.getItem(KEY);
    this.session = saved ? JSON.parse(saved) : null;
    if (this.session && Date.parse(this.session.expires) <= Date.now()) this.logout();
  }

  get token() {
    return this.session?.token;
  }

  get userName() {
    return this.session?.userName;
  }

  async login(userName, apiKey) {
    const body = await this.request('POST', '/api/Auth/Token', { userName, apiKey }, false);
    this.session = { userName, token: body.token, expires: body.expires };
    sessionStorage.setItem(KEY, JSON.stringify(this.session));
  }

  logout() {
    this.session = null;
    sessionStorage.removeItem(KEY);
  }

  /** The user's own record (privileges), found by the token's subject. */
  async me() {
    const payload = JSON.parse(atob(this.token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
    return this.get(`/api/users/${encodeURIComponent(payload.sub)}`);
  }

  get(path) {
    return this.request('GET', path);
  }

  post(path, body) {
    return this.request('POST', path, body);
  }

  patch(path, body) {
    return this.request('PATCH', path, body);
  }

  async request(method, path, body, auth = true) {
    const headers = { accept: 'application/json' };
    if (auth) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const parsed = await res.json().catch(() => null);
    if (res.status === 401 && auth) {
      this.logout();
      this.onExpired();
    }
    if (!res.ok || parsed?.success === false) throw new ApiError(res.status, parsed);
    return parsed;
  }
}
