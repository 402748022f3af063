// The floor as a whole process: `node sax.mjs ORIGIN PATH...` fetches every document of the
// site one after the other and tokenises it with sax (empty handlers, one thread), printing
// nothing. Start-up is included, as for every whole-process row.
import { prepare } from '../impl/sax.mjs';

const [origin, ...documents] = process.argv.slice(2);
const run = await prepare({ mode: 'site', origin, documents });
await run();
process.exit(0);
