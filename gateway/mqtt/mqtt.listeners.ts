/**
 * The sockets MQTT arrives on, each handed to aedes as a Duplex: plain TCP, WebSocket (the `ws`
 * package, on its own HTTP port at any path and on the REST ports at `/mqtt`; MQTT.js and
 * OwnTracks' `ws: true` use sub-protocol `mqtt`), and TLS when a certificate and key are given.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, createWebSocketStream, type WebSocket } from 'ws';
import { listen, type Listener } from '../shared/listen.js';
import { listenStream, type StreamListener } from '../shared/stream-server.js';

/** Takes one accepted connection: its stream, where it comes from, and for WebSocket the upgrade request. */
export type Handle = (stream: Duplex, remoteAddress: string | null, req?: http.IncomingMessage) => unknown;

export type { Listener };

const MAX_CONNECTIONS = 200_000;

export function listenTcp(handle: Handle, port: number, host: string): Promise<Listener> {
  return listenStream(
    (socket) => {
      socket.setNoDelay(true);
      handle(socket, socket.remoteAddress ?? null);
    },
    { port, host, maxConnections: MAX_CONNECTIONS },
  );
}

export function listenTls(
  handle: Handle,
  port: number,
  host: string,
  cert: Buffer | string,
  key: Buffer | string,
  onError: (e: Error) => void,
): Promise<StreamListener> {
  return listenStream(
    (socket) => {
      socket.setNoDelay(true);
      handle(socket, socket.remoteAddress ?? null);
    },
    { port, host, tls: { cert, key, onError }, maxConnections: MAX_CONNECTIONS },
  );
}

/** MQTT over WebSocket taken from HTTP upgrade requests: those of its own port, or of the REST ports' `/mqtt`. */
export interface WebSocketUpgrades {
  /**
   * Completes the WebSocket handshake of an upgrade request (or answers 400) and hands the
   * connection to MQTT, as coming from `remoteAddress` (default: the socket's peer).
   */
  upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer, remoteAddress?: string | null): void;
  /** Ends every connection taken so far. */
  close(): void;
}

/**
 * `maxPacketBytes` also bounds one WebSocket message (MQTT clients send a packet per message):
 * `ws` buffers a whole message before the packet guard behind it sees the bytes.
 */
export function webSocketUpgrades(
  handle: Handle,
  onError: (e: Error) => void,
  maxPacketBytes: number,
): WebSocketUpgrades {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: maxPacketBytes });
  wss.on('error', onError);
  const connected = (ws: WebSocket, req: http.IncomingMessage, remoteAddress: string | null) => {
    const stream = createWebSocketStream(ws);
    // aedes (mqtt-packet) writes a packet in pieces with the stream corked (a PUBACK in three); the
    // stream of `ws` has no writev, so each piece would leave as a WebSocket message of its own:
    // what was written while corked leaves as one message instead
    stream._writev = (chunks, callback) =>
      stream._write(Buffer.concat(chunks.map((c) => c.chunk as Buffer)), 'binary', callback);
    stream.on('error', onError);
    handle(stream, remoteAddress, req);
  };
  let closed = false;
  return {
    upgrade(req, socket, head, remoteAddress = req.socket.remoteAddress ?? null) {
      if (closed) return void socket.destroy();
      wss.handleUpgrade(req, socket, head, (ws) => connected(ws, req, remoteAddress));
    },
    close() {
      closed = true;
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    },
  };
}

/** MQTT over WebSocket on a port of its own (any path). */
export async function listenWebSocket(upgrades: WebSocketUpgrades, port: number, host: string): Promise<Listener> {
  const server = http.createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain; charset=utf-8', upgrade: 'websocket' });
    res.end('MQTT over WebSocket: connect with a WebSocket client (sub-protocol "mqtt").\n');
  });
  server.maxConnections = MAX_CONNECTIONS;
  server.on('upgrade', upgrades.upgrade);
  const listener = await listen(server, { port, host });
  return {
    port: listener.port,
    close: async () => {
      upgrades.close();
      await listener.close();
    },
  };
}
