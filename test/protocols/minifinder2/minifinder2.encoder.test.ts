import test from 'ava';
import { minifinder2Protocol } from '../../../protocols/minifinder2/minifinder2.protocol.js';
import { crc16Xmodem } from '../../../protocols/shared/crc.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

const CTX: CommandContext = { deviceId: '123456789012345', now: new Date(Date.UTC(2026, 0, 2)), serial: 0 };
const encode = minifinder2Protocol.encodeCommand!;
const hex = (text: string): string => encode(text, CTX).bytes.toString('hex');

runEncoderVectors(minifinder2Protocol, {
  // Traccar's firmwareUpdate with data "https://example.com" (model Nano) is the Text `firmwareUpdate URL`
  19: {
    encode: ({ model }) => encode('firmwareUpdate https://example.com', { ...CTX, ...(model && { model }) }).bytes,
  },
});

test('minifinder2.encoder: CRC-16/XMODEM has its catalogue check value', (t) => {
  t.is(crc16Xmodem(Buffer.from('123456789')), 0x31c3);
});

test('minifinder2.encoder: `configuration` asks for every setting (02 01 F0); with hex it sends those records', (t) => {
  const content = Buffer.from('0201f0', 'hex');
  const crc = Buffer.alloc(2);
  crc.writeUInt16LE(crc16Xmodem(content), 0);
  t.is(hex('configuration'), `ab000300${crc.toString('hex')}0100${content.toString('hex')}`);
  t.is(hex('configuration 0544000000 3c').slice(16), '0205440000003c');
  t.is(hex('configuration 05440000003C').slice(16), '0205440000003c');
  t.deepEqual(encode('configuration', CTX).match, {});
});

test('minifinder2.encoder: unknown words, empty texts, bad hex and over-long URLs are refused', (t) => {
  const reason = (text: string) => t.throws(() => encode(text, CTX), { instanceOf: CommandError })?.reason;
  t.is(reason(''), 'EMPTY');
  t.is(reason('reboot'), 'CHARSET');
  t.is(reason('configuration 0g'), 'CHARSET');
  t.is(reason('firmwareUpdate'), 'CHARSET');
  t.is(reason(`firmwareUpdate https://${'x'.repeat(300)}`), 'TOO_LONG');
  t.is(encode(`firmwareUpdate ${'x'.repeat(254)}`, CTX).bytes.length, 8 + 3 + 254);
});
