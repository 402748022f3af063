// Loaded with `node --import` by the full-disk test where it cannot mount a small file system:
// files under USP_SMALL_DISK_DIR share USP_SMALL_DISK_BYTES, and a write past that takes what fits
// (a short write) and the next one fails with ENOSPC, as a full file system answers.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { resolve } from 'node:path';

const dir = resolve(process.env.USP_SMALL_DISK_DIR ?? '/nonexistent');
let left = Number(process.env.USP_SMALL_DISK_BYTES ?? 0);
const onDisk = new Set();
const { openSync, writeSync } = fs;

fs.openSync = function (path, ...rest) {
  const fd = openSync.call(this, path, ...rest);
  if (typeof path === 'string' && resolve(path).startsWith(`${dir}/`)) onDisk.add(fd);
  else onDisk.delete(fd);
  return fd;
};
fs.writeSync = function (fd, data, ...rest) {
  if (!onDisk.has(fd)) return writeSync.call(this, fd, data, ...rest);
  const bytes =
    typeof data === 'string' ? Buffer.from(data, typeof rest[1] === 'string' ? rest[1] : 'utf8') : data;
  const offset = typeof data === 'string' ? 0 : (rest[0] ?? 0);
  const length = typeof data === 'string' ? bytes.length : (rest[1] ?? bytes.length - offset);
  const position = typeof data === 'string' ? rest[0] : rest[2];
  if (left <= 0)
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
      code: 'ENOSPC',
      errno: -28,
      syscall: 'write',
    });
  const n = Math.min(length, left);
  left -= n;
  return writeSync.call(this, fd, bytes, offset, n, position);
};
syncBuiltinESMExports();
