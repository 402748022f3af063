// Buffered line output to stdout for the whole-process peers, as a careful script would write
// it: 64 KiB writes that wait when the pipe is full (console.log per line would be slower).
import { once } from 'node:events';

export function lineWriter(stream = process.stdout) {
  let parts = [];
  let size = 0;
  return {
    async line(text) {
      parts.push(text, '\n');
      size += text.length + 1;
      if (size >= 65_536) await this.flush();
    },
    async flush() {
      if (size === 0) return;
      const ok = stream.write(parts.join(''));
      parts = [];
      size = 0;
      if (!ok) await once(stream, 'drain');
    },
  };
}
