import { writeFileSync } from 'node:fs';
import { serverFrameSchema } from '../src/protocol/ws-frames.js';
import { serverFrameCheckModule } from './frame-check-source.js';

// Writes the check the client runs on the gateway's frames, from the schema the server's own.
writeFileSync(new URL('../src/protocol/server-frame-check.generated.ts', import.meta.url), serverFrameCheckModule(serverFrameSchema));
