// rein's start hook for warm node hooks (see src/hooks/warm.rs). Loaded by node before the main
// script because rein added `--require <this file>` to NODE_OPTIONS.
//
// It loads rein's native helper (node_serve.c), which makes this interpreter a forking server
// and returns only in a call's process, with the call's pipes on fds 0-2. There it makes the
// environment and cwd those of the call, sets up the call's end (below), and returns: node
// then loads and runs the script as its main, exactly as a cold start does.
//
// The end: a forked node must not run node's own teardown (it joins threads this process does
// not have). The helper ends the process itself, at the points node would, with node's code:
// process.exit() (through process.reallyExit), the loop running empty ('beforeExit', then
// 'exit' unless 'beforeExit' gave the loop work), and an uncaught exception (after node has
// printed it and emitted 'exit').
'use strict';
(function reinWarmStart() {
  // A worker thread loads the preloads too: a worker of a call is that call's, already.
  const threads = require('worker_threads');
  if (!threads.isMainThread) {
    delete require.cache[__filename];
    return;
  }
  const fs = require('fs');
  // This interpreter cannot serve: rein reads why and runs the hook cold from now on.
  const unable = (e) => {
    fs.writeSync(2, '\0rein-warm-unable ' + String(e && e.message).split('\n')[0] + '\n');
    process.reallyExit(0);
  };
  const native = { exports: {} };
  try {
    process.dlopen(native, require('path').join(__dirname, 'node_serve.node'));
  } catch (e) {
    unable(e);
  }
  const helper = native.exports;
  // What most calls do first, done once before they come, without side effects: the modules
  // process.stdout and child_process load, and the formatting console.log compiles. Each call
  // then has them loaded and compiled, as its own (a fork's memory is a copy of this).
  const net = require('net');
  require('child_process');
  const v8 = require('v8');
  require('util').format('%s %d %j', 'a', 1, { b: [null] });
  JSON.parse(JSON.stringify({ a: [1, 'b', { c: null }] }));
  new net.Socket({ readable: false, writable: true });
  const { Writable } = require('stream');
  new (require('console').Console)(new Writable({ write() {} })).log('%s', JSON.stringify({ a: 1 }));

  // The call's process takes on the call: its environment and cwd, and what node reads once
  // at its start, as this process's own: its pid and parent, and the seed of Math.random (a
  // fork would otherwise draw the same numbers in every call).
  function become(go, rehearsal) {
    for (const name of go.unset) delete process.env[name];
    for (const [name, value] of Object.entries(go.set)) process.env[name] = value;
    process.chdir(go.cwd);
    const [pid, ppid, seed] = helper.ids().split(' ').map(Number);
    Object.defineProperty(process, 'pid', { value: pid, writable: false, enumerable: true, configurable: true });
    Object.defineProperty(process, 'ppid', { value: ppid, writable: true, enumerable: true, configurable: true });
    // Math.random takes its seed at its first use, from the flag when it is set (never used
    // in the server, whose first use would fix one seed for every call).
    if (rehearsal) return;
    v8.setFlagsFromString('--random-seed=' + seed);
    Math.random();
    v8.setFlagsFromString('--random-seed=0');
  }
  // Rehearsed here with this process's own values (it changes nothing), so that the call
  // runs it compiled.
  become({ set: {}, unset: [], cwd: process.cwd() }, true);
  let text;
  try {
    text = helper.serve();
  } catch (e) {
    unable(e);
  }
  become(JSON.parse(text));
  // process.exit() ends here, after its 'exit' listeners, with the code it computed.
  process.reallyExit = function reallyExit(code) {
    helper.exit(Number(code) | 0);
  };
  helper.arm(process);
  // A forked node has none of node's platform threads, and a worker thread's end waits for
  // their work: it would never end. rein runs a script that names worker_threads cold; one
  // that reaches them another way is told so here, rather than hanging until its timeout.
  threads.Worker = function Worker() {
    throw new Error(
      'rein: worker threads cannot run in a warm node hook; set "warm": false on this hook',
    );
  };
  // Leave no trace in the module cache the script can see.
  delete require.cache[__filename];
})();
