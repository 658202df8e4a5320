import { parseByteSize } from '../../../lib/byte-size';

describe('parseByteSize', () => {
  it.each([
    ['0', 0],
    ['4096', 4_096],
    ['100B', 100],
    ['64KiB', 65_536],
    ['512MiB', 536_870_912],
    ['512mib', 536_870_912],
    ['1GiB', 1_073_741_824],
    ['1.5GiB', 1_610_612_736],
    ['2TiB', 2_199_023_255_552],
    [' 8MiB ', 8_388_608],
  ])('reads %j as %d bytes', (text, bytes) => {
    expect(parseByteSize(text)).toBe(bytes);
  });

  it.each(['', 'lots', '-1', '512 MiB', '512MB', '1KB', 'MiB', '1e3', '0x10', '99999999999999999999'])('refuses %j', (text) => {
    expect(parseByteSize(text)).toBeUndefined();
  });
});
