/** Bytes as a reader takes them in: `512 B`, `28.4 KiB`, `3.1 MiB`. */
export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  return bytes < 1048576 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1048576).toFixed(1)} MiB`;
}
