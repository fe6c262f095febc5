// candor's mocha reporter (written to a scratch folder and passed as `--reporter PATH`):
// writes jest's JSON report to the path in CANDOR_MOCHA_REPORT (or `--reporter-option
// output=PATH`), one entry per test file,
// each test with its file, its suite path as a list and its retried attempts, which
// mocha's own xunit and json reporters lose. Prints one line per test for the log.
'use strict';
const fs = require('fs');

function message(err) {
  if (!err) {
    return '';
  }
  const stack = typeof err.stack === 'string' ? err.stack : '';
  const text = String(err.message === undefined ? err : err.message);
  return stack.includes(text) ? stack : `${text}\n${stack}`;
}

function fileOf(runnable) {
  for (let node = runnable; node; node = node.parent) {
    if (node.file) {
      return node.file;
    }
  }
  return '';
}

function CandorReporter(runner, options) {
  const output =
    process.env.CANDOR_MOCHA_REPORT ||
    (options && options.reporterOptions && options.reporterOptions.output);
  const files = new Map();
  // Keyed by file and title path: mocha retries a clone of the test, not the test.
  const records = new Map();
  const retries = new Map();
  const keyOf = (runnable) => [fileOf(runnable), ...runnable.titlePath()].join('\u0000');
  function record(runnable, status, err) {
    const titles = runnable.titlePath();
    const key = keyOf(runnable);
    let entry = records.get(key);
    if (entry === undefined) {
      const file = fileOf(runnable);
      if (!files.has(file)) {
        files.set(file, []);
      }
      const reasons = retries.get(key) || [];
      const retried =
        typeof runnable.currentRetry === 'function' ? runnable.currentRetry() : 0;
      entry = {
        ancestorTitles: titles.slice(0, -1),
        title: titles[titles.length - 1],
        fullName: titles.join(' '),
        status,
        duration: typeof runnable.duration === 'number' ? runnable.duration : null,
        failureMessages: [],
        invocations: Math.max(retried, reasons.length) + 1,
        retryReasons: reasons,
      };
      files.get(file).push(entry);
      records.set(key, entry);
    } else if (status === 'failed') {
      // An error after the test passed (a second `done`, an async throw) fails it.
      entry.status = 'failed';
    }
    if (err) {
      entry.failureMessages.push(message(err));
    }
    process.stdout.write(`${status} ${titles.join(' > ')}\n`);
    if (err) {
      process.stdout.write(`${message(err)}\n`);
    }
  }
  runner.on('retry', (test, err) => {
    const key = keyOf(test);
    if (!retries.has(key)) {
      retries.set(key, []);
    }
    retries.get(key).push(message(err));
  });
  runner.on('pass', (test) => record(test, 'passed'));
  runner.on('pending', (test) => record(test, 'pending'));
  runner.on('fail', (runnable, err) => record(runnable, 'failed', err));
  runner.once('end', () => {
    const testResults = [];
    let numTotalTests = 0;
    for (const [name, assertionResults] of files) {
      testResults.push({ name, assertionResults });
      numTotalTests += assertionResults.length;
    }
    // `numTotalTests` first: it and `testResults` are what tell jest's JSON apart.
    fs.writeFileSync(output, JSON.stringify({ numTotalTests, producer: 'mocha', testResults }));
  });
}

module.exports = CandorReporter;
