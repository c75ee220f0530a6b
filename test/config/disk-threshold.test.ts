import test from 'ava';
import { ConfigError, loadConfig, unknownVariables } from '../../config/config.js';

const GiB = 2 ** 30;

test('config: the disk thresholds default to 10 % or 2 GiB (warn) and 1 % or 1 GiB (error), checked every 30 s', (t) => {
  const c = loadConfig({});
  t.deepEqual(c.diskWarn, { percent: 10, bytes: 2 * GiB });
  t.deepEqual(c.diskError, { percent: 1, bytes: GiB });
  t.is(c.diskCheckSeconds, 30);
  t.true(Object.isFrozen(c.diskWarn));
});

test('config: a disk threshold is a percentage, a size with a unit or in bytes, both, or off', (t) => {
  const warn = (v: string) => loadConfig({ TRACKGATE_DISK_WARN: v }).diskWarn;
  t.deepEqual(warn('15%'), { percent: 15, bytes: 0 });
  t.deepEqual(warn('2.5%'), { percent: 2.5, bytes: 0 });
  t.deepEqual(warn('2GiB'), { percent: 0, bytes: 2 * GiB });
  t.deepEqual(warn('500MB'), { percent: 0, bytes: 500e6 });
  t.deepEqual(warn('500 mib'), { percent: 0, bytes: 500 * 2 ** 20 });
  t.deepEqual(warn('1048576'), { percent: 0, bytes: 1048576 });
  t.deepEqual(warn(' 5% , 3G '), { percent: 5, bytes: 3e9 });
  t.deepEqual(warn('off'), { percent: 0, bytes: 0 });
  t.deepEqual(warn('OFF'), { percent: 0, bytes: 0 });
  t.deepEqual(loadConfig({ TRACKGATE_DISK_ERROR: '0' }).diskError, { percent: 0, bytes: 0 }, '0 is off too');
  t.is(loadConfig({ TRACKGATE_DISK_CHECK_INTERVAL: '5' }).diskCheckSeconds, 5);
});

test('config: a bad disk threshold names its variable and the value', (t) => {
  const cases: [string, string, RegExp][] = [
    ['TRACKGATE_DISK_WARN', '10 percent', /"10 percent" is neither a percentage \(10%\) nor a size/],
    ['TRACKGATE_DISK_WARN', '2GiBs', /"2GiBs" is neither/],
    ['TRACKGATE_DISK_ERROR', '-1%', /"-1%" is neither/],
    ['TRACKGATE_DISK_ERROR', '150%', /"150%" is more than 100%/],
    ['TRACKGATE_DISK_ERROR', '1%,', /"" is neither/],
    ['TRACKGATE_DISK_CHECK_INTERVAL', '0', /0 is out of range/],
    ['TRACKGATE_DISK_CHECK_INTERVAL', '30s', /"30s" is not a whole number/],
  ];
  for (const [variable, value, reason] of cases) {
    const e = t.throws(() => loadConfig({ [variable]: value }), { instanceOf: ConfigError });
    t.is(e?.variable, variable, value);
    t.regex(e?.message ?? '', new RegExp(`^${variable}: ${reason.source}`));
  }
});

test('config: the disk variables are known ones', (t) => {
  t.deepEqual(
    unknownVariables({ TRACKGATE_DISK_WARN: '5%', TRACKGATE_DISK_ERROR: '1%', TRACKGATE_DISK_CHECK_INTERVAL: '10' }),
    [],
  );
});
