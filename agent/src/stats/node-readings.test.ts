import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defaultRouteInterface, parseLoadavgThreads, parseMeminfo, parseNetDev, parseProcStat } from './node-readings.js';

describe('node readings from /proc', () => {
  it('/proc/stat: busy ticks (not idle, not iowait) at USER_HZ 100, and the boot time', () => {
    //          user nice system idle  iowait irq softirq steal guest guest_nice
    const s = parseProcStat('cpu  100 20 30 5000 40 5 6 7 50 0\ncpu0 50 10 15 2500 20 2 3 3 25 0\nbtime 1700000000\n');
    assert.equal(s.cpuUsageNs, (100 + 20 + 30 + 5 + 6 + 7) * 10_000_000);
    assert.equal(s.bootTimeS, 1_700_000_000);
  });

  it('/proc/meminfo: usage = total - free, working set = usage - Inactive(file), available = total - working set', () => {
    const m = parseMeminfo('MemTotal:       1000 kB\nMemFree:         200 kB\nMemAvailable:    700 kB\nInactive(file):  300 kB\nAnonPages:       150 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\nHugePages_Total: 0\n');
    assert.deepEqual(m, {
      capacityBytes: 1000 * 1024, usageBytes: 800 * 1024, workingSetBytes: 500 * 1024, availableBytes: 500 * 1024, rssBytes: 150 * 1024,
      swapTotalBytes: 0, swapFreeBytes: 0,
    });
  });

  it('/proc/net/dev: bytes and errors per interface, without lo and veths', () => {
    const text = [
      'Inter-|   Receive                                                |  Transmit',
      ' face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed',
      '    lo: 11045559514 1489137    0    0    0     0          0         0 11045559514 1489137    0    0    0     0       0          0',
      '  eth0: 258366123   12625    4    0    0     0          0         0  1180710   11868    2    0    0     0       0          0',
      'veth1234: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0',
    ].join('\n');
    assert.deepEqual(parseNetDev(text), [{ name: 'eth0', rxBytes: 258366123, rxErrors: 4, txBytes: 1180710, txErrors: 2 }]);
  });

  it('the default route interface and the thread count', () => {
    const route = 'Iface\tDestination\tGateway \tFlags\nens3\t000200C0\t00000000\t0001\nens3\t00000000\t010200C0\t0003\n';
    assert.equal(defaultRouteInterface(route), 'ens3');
    assert.equal(defaultRouteInterface('Iface\tDestination\n'), undefined);
    assert.equal(parseLoadavgThreads('7.04 6.58 6.40 8/162 28059\n'), 162);
  });
});
