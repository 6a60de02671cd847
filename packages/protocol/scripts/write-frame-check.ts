import { writeFileSync } from 'node:fs';
import { serverFrameSchema } from '../src/ws-frames.js';
import { serverFrameCheckModule } from './frame-check-source.js';

// Writes the check the client package runs on the gateway's frames, from the schema the gateway's own.
writeFileSync(new URL('../src/server-frame-check.generated.ts', import.meta.url), serverFrameCheckModule(serverFrameSchema));
