// The in-browser engine's module worker: loads the wasm built from web/worker (see
// web/worker/build.sh), whose start function answers the page's messages.
import init from './worker/agentworld_worker.js';
await init();
