#!/usr/bin/env node
// The `trackgate` command: runs the compiled CLI (built by `npm install` / `npm run build`).
import '../dist/cli.js';
