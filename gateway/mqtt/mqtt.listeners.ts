/**
 * The sockets MQTT arrives on, each handed to aedes as a Duplex: plain TCP, WebSocket (the `ws`
 * package on its own HTTP port, any path; MQTT.js and OwnTracks' `ws: true` use sub-protocol
 * `mqtt`), and TLS when a certificate and key are given.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, createWebSocketStream } from 'ws';
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

/**
 * `maxPacketBytes` also bounds one WebSocket message (MQTT clients send a packet per message):
 * `ws` buffers a whole message before the packet guard behind it sees the bytes.
 */
export async function listenWebSocket(
  handle: Handle,
  port: number,
  host: string,
  onError: (e: Error) => void,
  maxPacketBytes: number,
): Promise<Listener> {
  const server = http.createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain; charset=utf-8', upgrade: 'websocket' });
    res.end('MQTT over WebSocket: connect with a WebSocket client (sub-protocol "mqtt").\n');
  });
  server.maxConnections = MAX_CONNECTIONS;
  const wss = new WebSocketServer({ server, perMessageDeflate: false, maxPayload: maxPacketBytes });
  wss.on('error', onError);
  wss.on('connection', (ws, req) => {
    const stream = createWebSocketStream(ws);
    // aedes (mqtt-packet) writes a packet in pieces with the stream corked (a PUBACK in three); the
    // stream of `ws` has no writev, so each piece would leave as a WebSocket message of its own:
    // what was written while corked leaves as one message instead
    stream._writev = (chunks, callback) =>
      stream._write(Buffer.concat(chunks.map((c) => c.chunk as Buffer)), 'binary', callback);
    stream.on('error', onError);
    handle(stream, req.socket.remoteAddress ?? null, req);
  });
  const listener = await listen(server, { port, host });
  return {
    port: listener.port,
    close: async () => {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await listener.close();
    },
  };
}
