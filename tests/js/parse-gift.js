// Test-only: parse GIFT with gift-pegjs (an independent parser) for tests/test_export_gift.py.
// Reads one JSON string (a whole GIFT file) per stdin line; writes one JSON line per input:
// {"ok": true, "questions": [...]} or {"ok": false, "error": "..."}.
"use strict";
const readline = require("readline");
const { parse } = require("gift-pegjs");

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  let out;
  try {
    out = { ok: true, questions: parse(JSON.parse(line)) };
  } catch (e) {
    out = { ok: false, error: String(e && e.message ? e.message : e), location: e && e.location };
  }
  process.stdout.write(JSON.stringify(out) + "\n");
});
