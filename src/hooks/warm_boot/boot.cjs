// rein's start hook for warm node hooks (see src/hooks/warm.rs). Loaded by node before the main
// script because rein added `--require <this file>` to NODE_OPTIONS. It waits on stdin for
// rein's go message, makes the environment and cwd those of the call, and returns: node then
// loads and runs the script as usual.
'use strict';
(function reinWarmStart() {
  const fs = require('fs');
  function readExact(n) {
    const buf = Buffer.alloc(n);
    let off = 0;
    while (off < n) {
      let got;
      try {
        got = fs.readSync(0, buf, off, n - off, null);
      } catch (e) {
        if (e.code === 'EAGAIN') continue;
        throw e;
      }
      // rein is gone before the call: nothing ran, nothing will.
      if (got === 0) process.reallyExit(0);
      off += got;
    }
    return buf;
  }
  fs.writeSync(2, '\0rein-warm-ready\n');
  const size = parseInt(readExact(8).toString('latin1'), 16);
  const go = JSON.parse(readExact(size).toString('utf8'));
  for (const name of go.unset) delete process.env[name];
  for (const [name, value] of Object.entries(go.set)) process.env[name] = value;
  process.chdir(go.cwd);
  // Leave no trace in the module cache the script can see.
  delete require.cache[__filename];
})();
