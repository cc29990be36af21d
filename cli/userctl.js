#!/usr/bin/env node
// The `userctl` command (the package's bin): runs the TypeScript client through tsx.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
