// A worker thread running a TypeScript module (workerData.module, a file URL): tsx's loader, which
// the test process registers with --import, does not reach worker threads on Node 20.
import { workerData } from 'node:worker_threads';
import { tsImport } from 'tsx/esm/api';

await tsImport(workerData.module, import.meta.url);
