/**
 * The forwarding benchmark's webhook target, in its own process (pinned with the load generator,
 * away from trackgate): answers 200 to every POST and counts the messages of each batch by their
 * `"event":"` key (one per message), without parsing the JSON, so that the target takes as little
 * of the machine as a remote receiver would.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveCommands } from './child.js';

const KEY = Buffer.from('"event":"');
let messages = 0;
let tail = Buffer.alloc(0);

const server = http.createServer((req, res) => {
  req.on('data', (chunk: Buffer) => {
    // a key split across two chunks is found in the joined tail
    const buf = tail.length ? Buffer.concat([tail, chunk]) : chunk;
    for (let i = buf.indexOf(KEY); i !== -1; i = buf.indexOf(KEY, i + KEY.length)) messages++;
    tail = Buffer.from(buf.subarray(Math.max(0, buf.length - (KEY.length - 1))));
    if (tail.includes(KEY[0]) === false) tail = Buffer.alloc(0);
  });
  req.on('end', () => {
    tail = Buffer.alloc(0);
    res.writeHead(200);
    res.end();
  });
});

serveCommands({
  async listen() {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  },
  count: () => messages,
});
